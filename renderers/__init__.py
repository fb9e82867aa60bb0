"""Language side: one module per family turning instance data into prompt text."""
