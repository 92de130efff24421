from tests.app.conftest import _utc, sample_home, sample_path  # noqa: F401  (fixtures)
