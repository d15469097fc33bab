# Stands in for a Python without matplotlib (tests/cli/plot.sh puts this folder first on
# PYTHONPATH): `nvsvp plot` must then exit 2 naming the package to install.
raise ImportError("matplotlib hidden by the test")
