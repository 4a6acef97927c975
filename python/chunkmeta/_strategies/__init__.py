"""Each spec folder's Hypothesis strategies (specs/<name>/<name>_strategies.py),
copied here by the build; chunkmeta.strategies exports them."""
