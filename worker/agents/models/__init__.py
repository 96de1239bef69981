"""The trained models of the reasoning core and the stored form they share (numpy inference only)."""
