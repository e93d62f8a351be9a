"""Old name of the collector client, kept so that code written for it keeps running:
`import rewind_client` is `rewind.client` (the package `rewind`, python/rewind/), every
name included. New code: `import rewind; rewind.connect("HOST:PORT")` or `rewind.Client`.
"""
import sys

from rewind import client as _client

sys.modules[__name__] = _client
