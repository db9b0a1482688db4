"""The plugin host: pluggy's PluginManager for the `irpipe` entry-point group, irpipe's own plugins
loaded first by name (`builtin`), and the checks a plugin passes before anything of it is used
(`checks`), so that a broken plugin is reported by its distribution and the others work.

Imports: the foundation (hookspecs, errors), the contract (to check what plugins return), pluggy.
Built-in plugins (metrics/, outputs/) are loaded by name, as entry points are, never imported.
"""
