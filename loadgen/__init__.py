"""dcsm.loadgen"""
