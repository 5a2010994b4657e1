"""The process's model choice (`run/_chooser.py`): the SSL context begun beside start-up for
the provider the run will choose, and only when it will use TLS (ADR-0043)."""

from __future__ import annotations

from bingo.kernel.notices import Notices
from bingo.kernel.registry import Registry
from bingo.kernel.settings import Settings
from bingo.run import ModelChooser


def _prepared(environ: dict[str, str]) -> ModelChooser:
    chooser = ModelChooser(Settings(), Registry(Notices()), environ)
    chooser.prepare()
    return chooser


def test_the_ssl_context_is_begun_for_an_https_endpoint_and_not_for_a_plain_http_one() -> None:
    https = _prepared({"ANTHROPIC_API_KEY": "k"})
    plain = _prepared({"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
    local = _prepared({"OPENAI_BASE_URL": "http://localhost:11434/v1"})
    assert https._tls is not None and https._tls.context() is not None  # made on its thread
    assert plain._tls is not None and plain._tls.context() is None  # never begun
    assert local._tls is not None and local._tls.context() is None


def test_no_ssl_context_is_begun_when_no_built_in_provider_will_be_chosen() -> None:
    nobody = _prepared({})
    assert nobody._tls is None or nobody._tls.context() is None
