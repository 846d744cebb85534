"""Bottom layer: people, their roles and API tokens, and the one access error every layer raises."""
