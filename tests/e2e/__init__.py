"""Browser tests (Chromium + Playwright); fixtures in conftest.py."""
