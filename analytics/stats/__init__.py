"""Django-free statistics of the human study, one module per topic, over plain data from the selectors."""
