"""The ground layer: errors, host sets, file writing and Batsim file kinds, imported by every other layer."""
