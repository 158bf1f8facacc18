"""dcsm.service"""
