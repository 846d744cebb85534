"""Analytics of human studies: accuracy (Table 4), agreement, span overlap, calibration and score correlations."""
