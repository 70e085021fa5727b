"""Push: VAPID key, browser subscriptions, notification actions, test sends, apprise channels."""

from __future__ import annotations

import json
from typing import Annotated

from litestar import Controller, Request, Response, delete, get, post
from litestar.exceptions import (
    ClientException,
    NotAuthorizedException,
    PermissionDeniedException,
)
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import JSONBody, PathParameter

from credence.api.beliefs import ETAG_HEADER, outcome_response
from credence.api.deps import SharedServices, principal_of
from credence.api.errors import errors
from credence.auth import Principal, admin_only, reviewer_or_admin
from credence.clock import rfc3339
from credence.db import channels as channels_db
from credence.db import push as push_db
from credence.db.channels import NewChannel
from credence.db.push import NewSubscription
from credence.errors import NotFound
from credence.ids import new_id
from credence.memory.beliefs import etag
from credence.models import (
    ID_PATTERN,
    Belief,
    Problem,
    PushActionIn,
    PushChannel,
    PushChannelIn,
    PushChannelPage,
    PushSubscription,
    PushSubscriptionIn,
    PushSubscriptionPage,
    PushTestChannel,
    PushTestDevice,
    PushTestResult,
    VapidPublicKey,
)
from credence.notify import outbox, tokens
from credence.notify.channels import mask_channel_url
from credence.notify.payload import opens_only
from credence.notify.runtime import push_http_of, runtime_of
from credence.notify.testsend import send_test
from credence.notify.webpush import parse_subscription
from credence.notify.worker import MAX_SUBSCRIPTIONS_PER_KEY

SubscriptionIdPath = Annotated[
    str, PathParameter(pattern=ID_PATTERN, max_length=31, description="Subscription id")
]
ChannelIdPath = Annotated[
    str, PathParameter(pattern=ID_PATTERN, max_length=31, description="Channel id")
]


def _unusable(description: str) -> ResponseSpec:
    return ResponseSpec(data_container=Problem, description=description, generate_examples=False)


def _subscription(row) -> PushSubscription:
    return PushSubscription(
        id=row["id"],
        key_id=row["key_id"],
        endpoint=row["endpoint"],
        expiration_time=row["expiration_time"],
        created_at=row["created_at"],
        last_seen_at=row["last_seen_at"],
    )


# --- subscriptions ---------------------------------------------------------------------------


class PushController(Controller):
    """/api/v1/push: the VAPID key, subscriptions and test sends (reviewer and admin keys)."""

    path = "/push"
    tags = ["push"]
    guards = [reviewer_or_admin]

    @get("/vapid-public-key", operation_id="getVapidPublicKey", responses=errors(403))
    async def vapid_public_key(self, request: Request, services: SharedServices) -> VapidPublicKey:
        """The server's VAPID public key, to pass as applicationServerKey when subscribing."""
        runtime = await runtime_of(services)
        return VapidPublicKey(public_key=runtime.keys.public_key_b64url)

    @post(
        "/subscriptions",
        operation_id="upsertPushSubscription",
        status_code=201,
        responses={
            **errors(403),
            409: _unusable("The endpoint is registered by another key; it stays with that key."),
            422: _unusable(
                "The subscription fits the schema but cannot be used: p256dh is not a"
                " point on P-256, the endpoint does not parse as a push endpoint, or its host"
                " is not public (it does not resolve, or resolves to a loopback, private,"
                " link-local, CGNAT, multicast or unspecified address)."
            ),
            200: ResponseSpec(
                data_container=PushSubscription,
                description="The calling key had already subscribed this endpoint; its keys and"
                " last_seen_at were refreshed.",
                generate_examples=False,
            ),
        },
    )
    async def upsert(
        self, request: Request, services: SharedServices, data: JSONBody[PushSubscriptionIn]
    ) -> Response[PushSubscription]:
        """Subscribe a device (the PWA re-sends this on every open). Endpoints must be https.

        An endpoint belongs to the key that registered it: another key gets 409.
        """
        principal = principal_of(request)
        policy = services.push_policy
        try:
            parsed = parse_subscription(
                {
                    "endpoint": data.endpoint,
                    "keys": {"p256dh": data.keys.p256dh, "auth": data.keys.auth},
                },
                policy.allowed,
            )
            await policy.vet(parsed.endpoint)
        except ValueError as exc:
            raise ClientException(str(exc), status_code=422) from None
        now = rfc3339(services.clock())
        expiration = int(data.expiration_time) if data.expiration_time is not None else None

        new = NewSubscription(
            key_id=principal.key_id,
            endpoint=parsed.endpoint,
            p256dh=parsed.p256dh,
            auth=parsed.auth,
            expiration_time=expiration,
        )
        subscription_id = new_id("sub")
        created, row = await services.store.write(
            lambda conn: push_db.upsert_subscription(
                conn, new, subscription_id=subscription_id, now=now, keep=MAX_SUBSCRIPTIONS_PER_KEY
            )
        )
        return Response(_subscription(row), status_code=201 if created else 200)

    @get("/subscriptions", operation_id="listPushSubscriptions", responses=errors(403))
    async def list_subscriptions(
        self, request: Request, services: SharedServices
    ) -> PushSubscriptionPage:
        """The calling key's own subscriptions."""
        key_id = principal_of(request).key_id
        rows = await services.store.read(lambda conn: push_db.subscriptions_of_key(conn, key_id))
        return PushSubscriptionPage(items=[_subscription(r) for r in rows])

    @delete(
        "/subscriptions/{subscription_id:str}",
        operation_id="deletePushSubscription",
        status_code=204,
        responses=errors(403, 404),
    )
    async def delete_subscription(
        self, request: Request, services: SharedServices, subscription_id: SubscriptionIdPath
    ) -> None:
        """Unsubscribe a device: the caller's own (an admin key may remove any)."""
        principal = principal_of(request)
        owner = None if principal.scope == "admin" else principal.key_id
        if not await services.store.write(
            lambda conn: push_db.delete_subscription(conn, subscription_id, owner)
        ):
            raise NotFound(f"subscription {subscription_id!r} not found")

    @post("/test", operation_id="sendPushTest", status_code=200, responses=errors(403))
    async def send_test(self, request: Request, services: SharedServices) -> PushTestResult:
        """Send a test notification now to the caller's devices and channels; report each."""
        principal = principal_of(request)
        agents = None if principal.scope == "admin" else principal.agents
        test_id, devices, channels = await send_test(
            services.store,
            push_http_of(services),
            await runtime_of(services),
            services.clock,
            key_id=principal.key_id,
            agents=agents,
        )
        return PushTestResult(
            test_id=test_id,
            devices=[PushTestDevice(**d.__dict__) for d in devices],
            channels=[PushTestChannel(**c.__dict__) for c in channels],
        )


# --- notification actions ----------------------------------------------------------------------


@post(
    "/push/actions",
    operation_id="applyPushAction",
    status_code=200,
    exclude_from_auth=True,
    tags=["push"],
    responses=errors(401, 403, 404, 409, 412),
    response_headers=ETAG_HEADER,
)
async def apply_action(
    request: Request, services: SharedServices, data: JSONBody[PushActionIn]
) -> Response[Belief]:
    """Keep or Forget from a notification button, authorised by the payload's token alone.

    A belief that would change another (any op but ``add``, or a flagged contradiction) is a
    409 and nothing is decided: its notification only opens the card.

    Applied exactly like the decision endpoints (same audit, under the subscribing key), at the
    belief version the notification showed (412 if it changed since), with an Idempotency-Key
    derived from the token: a retried tap returns the first answer and never applies twice.
    """
    runtime = await runtime_of(services)
    try:
        claims = tokens.verify(runtime.secret, data.token, services.clock())
    except tokens.TokenError as exc:
        raise NotAuthorizedException(exc.reason) from None
    row = await services.store.read(lambda conn: push_db.action_key(conn, claims.key_id))
    if row is None or row["revoked_at"] is not None:
        raise NotAuthorizedException("the key this notification was sent to has been revoked")
    agents = json.loads(row["agents"]) if row["agents"] else None
    principal = Principal(
        key_id=row["id"],
        scope=row["scope"],
        agents=frozenset(agents) if agents is not None else None,
        label=row["label"],
    )
    if principal.scope == "agent":
        raise PermissionDeniedException("agent keys cannot decide on beliefs")
    belief = await services.beliefs.get_row(claims.belief_id)
    if (
        belief is not None
        and principal.sees_agent(belief["agent_id"])
        and opens_only(belief["op"], json.loads(belief["review_reasons"]))
    ):
        raise ClientException(
            "open the card to decide: this belief would change another one", status_code=409
        )
    outcome = await services.beliefs.decide(
        claims.belief_id,
        data.action,
        principal,
        if_match=etag(claims.version),
        idempotency_key=tokens.idempotency_key(data.token, data.action),
        payload={"reason": None} if data.action == "forget" else {},
    )
    return outcome_response(outcome)


# --- channels (admin) ----------------------------------------------------------------------------


class PushChannelController(Controller):
    """/api/v1/push/channels: apprise URLs that get every notification (admin)."""

    path = "/push/channels"
    tags = ["push"]
    guards = [admin_only]

    @get(operation_id="listPushChannels", responses=errors(403))
    async def list_channels(self, request: Request, services: SharedServices) -> PushChannelPage:
        """Every channel, CREDENCE_APPRISE_URLS ones included, with masked URLs."""
        rows = await services.store.read(channels_db.list_channels)
        return PushChannelPage(items=[PushChannel(**outbox.channel_row(r)) for r in rows])

    @post(
        operation_id="createPushChannel",
        status_code=201,
        responses={
            **errors(403, 404, 409),
            422: _unusable("apprise cannot use this URL (unknown scheme or malformed)."),
        },
    )
    async def create_channel(
        self, request: Request, services: SharedServices, data: JSONBody[PushChannelIn]
    ) -> PushChannel:
        """Add an apprise URL (e.g. ntfy://, mailto://, tgram://, json://)."""
        url = data.url.strip()
        try:
            masked = mask_channel_url(url)
        except ValueError as exc:
            raise ClientException(f"url: {exc}", status_code=422) from None
        channel = NewChannel(
            id=new_id("chn"),
            source="admin",
            url=url,
            url_hash=outbox.url_hash(url),
            masked_url=masked,
            label=data.label,
            agents=sorted(set(data.agents)) if data.agents else None,
            created_at=rfc3339(services.clock()),
        )
        row = await services.store.write(lambda conn: channels_db.create_channel(conn, channel))
        return PushChannel(**outbox.channel_row(row))

    @delete(
        "/{channel_id:str}",
        operation_id="deletePushChannel",
        status_code=204,
        responses=errors(403, 404, 409),
    )
    async def delete_channel(
        self, request: Request, services: SharedServices, channel_id: ChannelIdPath
    ) -> None:
        """Remove an admin channel (CREDENCE_APPRISE_URLS ones are removed from the setting)."""
        await services.store.write(lambda conn: channels_db.delete_admin_channel(conn, channel_id))
