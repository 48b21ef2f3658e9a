"""Django settings for the orders service."""

import os

DEBUG = os.environ.get("DEBUG", "0") == "1"
ALLOWED_HOSTS = ["localhost", "orders.internal"]

# Read from the environment in production; never commit the real value.
SECRET_KEY = os.environ["DJANGO_SECRET_KEY"]

# Checksum of the vendored bundle, checked at start-up.
BUNDLE_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

# Left here by mistake during a debugging session.
GITHUB_DEPLOY_TOKEN = "{{TOKEN:2}}"

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": "orders",
        "USER": "orders",
        "PASSWORD": os.environ.get("DB_PASSWORD", ""),
        "HOST": "db",
    }
}
