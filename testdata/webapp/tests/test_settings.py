from config import settings


def test_debug_off_by_default(monkeypatch):
    monkeypatch.delenv("DEBUG", raising=False)
    assert settings.DEBUG is False


def test_placeholder_token_is_rejected():
    assert not settings.looks_real("ghp_your_token_here")
