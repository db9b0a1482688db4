"""Names to measures: the registry of every installed measure (`registry`), the one namespace its
names, aliases and trec_eval's names share (`namespace`, `trec_names`), and a spec's metric
entries resolved to measures with validated parameters (`resolve`).

Imports: the foundation, the spec, the contract and the plugin host.
"""
