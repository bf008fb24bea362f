"""The suite's version: stamped on certificates and said by rollcert's own protocol servers."""

SUITE_VERSION = "0.1.0"
