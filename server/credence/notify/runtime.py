"""What push needs at run time: the VAPID keys and token secret (kept in the database), clients."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from credence.db.secrets import put_secret_once
from credence.notify import tokens, vapid
from credence.settings import SettingsError

if TYPE_CHECKING:
    from credence.db.engine import Database
    from credence.notify.endpoints import EndpointPolicy
    from credence.notify.review import ReviewPlanner
    from credence.notify.worker import PushWorker
    from credence.settings import Settings

log = logging.getLogger(__name__)

# The installation secret holding the VAPID private key (PKCS#8 PEM) when no setting gives it.
VAPID_SECRET = "vapid_private_pem"


@dataclass
class PushRuntime:
    """What the push API needs at run time: VAPID keys, the token secret and the worker."""

    keys: vapid.VapidKeys
    subject: str
    secret: bytes
    worker: PushWorker | None = None
    # The review planner while the push component runs.
    planner: ReviewPlanner | None = None


def check_settings(settings: Any) -> str:
    """The validated VAPID subject; also parses CREDENCE_VAPID_PRIVATE_KEY when it is set.

    Raises SettingsError with a message naming the setting to fix.
    """
    try:
        subject = vapid.validate_subject(settings.vapid_subject)
        vapid.supplied_keys(settings.vapid_private_key)
    except ValueError as exc:
        raise SettingsError(f"push cannot start: {exc}") from None
    return subject


async def load_vapid_keys(store: Database, data_dir: Path, supplied: str | None) -> vapid.VapidKeys:
    """The setting's key if given, else the installation's key in the database, made once.

    Every replica stores its candidate with put_secret_once and uses the one that won, so all
    present the same public key. A ``vapid_private.pem`` an older Credence left in ``data_dir``
    is the candidate when there is one, so existing subscriptions keep working.
    """
    keys = vapid.supplied_keys(supplied)
    legacy = vapid.legacy_pem(data_dir)
    if keys is not None:
        if legacy is not None:
            on_disk = vapid.keys_from_pem(legacy, "file", vapid.VAPID_KEY_FILENAME)
            if on_disk.public_key_b64url != keys.public_key_b64url:
                log.warning(
                    "%s differs from the key in %s; subscriptions made with the file's key fail",
                    vapid.PRIVATE_KEY_SETTING,
                    Path(data_dir) / vapid.VAPID_KEY_FILENAME,
                )
        return keys
    candidate = legacy if legacy is not None else vapid.generate().private_pem()
    pem = await store.write(lambda conn: put_secret_once(conn, VAPID_SECRET, candidate))
    if pem != candidate:
        return vapid.keys_from_pem(pem, "database", "the database's VAPID key")
    if legacy is not None:
        log.info("adopted the VAPID key of %s into the database", vapid.VAPID_KEY_FILENAME)
        return vapid.keys_from_pem(pem, "file", vapid.VAPID_KEY_FILENAME)
    log.info("generated a new VAPID key pair, kept in the database")
    return vapid.keys_from_pem(pem, "generated", "the generated VAPID key")


async def load_runtime(settings: Any, store: Database) -> PushRuntime:
    """Validate the settings and load (or create once, in the database) keys and token secret.

    Raises SettingsError with a message naming the setting to fix.
    """
    subject = check_settings(settings)
    try:
        keys = await load_vapid_keys(store, settings.data_dir, settings.vapid_private_key)
    except (ValueError, OSError) as exc:
        raise SettingsError(f"push cannot start: {exc}") from None
    return PushRuntime(keys=keys, subject=subject, secret=store.secret(tokens.SECRET_NAME))


@dataclass
class PushParts:
    """What push takes from the app (settings, store, the vetted client and its policy), and
    the runtime while the push component runs."""

    settings: Settings
    store: Database
    http: httpx.AsyncClient
    policy: EndpointPolicy
    runtime: PushRuntime | None = None

    async def loaded(self) -> PushRuntime:
        """The running push runtime, or one loaded on demand when the worker is not running."""
        if self.runtime is None:
            self.runtime = await load_runtime(self.settings, self.store)
        return self.runtime

    def wake_planner(self) -> None:
        """Have the review planner look again (a reviewer's settings changed), if it runs."""
        if self.runtime is not None and self.runtime.planner is not None:
            self.runtime.planner.wake()
