"""Analysis of Batsim outputs (ours or real Batsim's): reading, metrics, plots, golden regression."""
