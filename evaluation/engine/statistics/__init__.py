"""Statistics shared by the layers above the engine (comparison, DHP, analytics): correlations and ties."""
