"""JSON Schemas of every ``rollcert-protocol`` message, shipped as package data.

One file per message (``<op>.request.json``, ``<op>.reply.json``); the tests
validate rollcert's own encoders and the reference server against them, and an
author of a server in another language can validate their replies too.
"""
