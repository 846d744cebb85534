"""API of studies: campaigns (set up, list, open) and their participants."""
