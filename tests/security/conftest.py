import pytest


@pytest.fixture(autouse=True)
def no_address_lockout_left_over():
    """Failed logins per address are counted in Redis for the cool-off time (apps/accounts/lockout.py):
    the tests here fail logins from fixed addresses, so an earlier run's count must not lock them out."""
    import redis
    from django.conf import settings

    try:
        client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2)
        stale = list(client.scan_iter(match="*login-ip-failures:*", count=500))
        if stale:
            client.delete(*stale)
    except redis.RedisError:
        pass
    yield
