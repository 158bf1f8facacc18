"""dcsm.gpu"""
