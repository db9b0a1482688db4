"""The built-in metrics, one family per module; each module is a plugin like a third party's
(`pipeline.host.builtin`), so the contract is exercised on every run.

Imports: `pipeline.api` alone. (Their bytes are part of the history's cache keys: editing a module
makes its metrics' results be computed again.)
"""
