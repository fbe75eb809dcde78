"""A STAND-IN of Lightning, for tests only: see lightning/pytorch."""
