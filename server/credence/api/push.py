"""Push: VAPID key, browser subscriptions, notification actions, test sends, apprise channels."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Request, Response, delete, get, post
from litestar.exceptions import (
    ClientException,
    NotAuthorizedException,
    PermissionDeniedException,
    TooManyRequestsException,
)
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import JSONBody, PathParameter

from credence.access.principal import Principal, admin_only, reviewer_or_admin
from credence.api.beliefs import ETAG_HEADER, outcome_response
from credence.api.decisions import Decisions
from credence.api.deps import SharedServices, principal_of
from credence.api.errors import errors
from credence.errors import NotFound
from credence.memory.lifecycle.decisions import Forget, Keep, etag
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
from credence.notify import manage, ntfy, tokens
from credence.notify.channels import mask_channel_url
from credence.notify.testsend import send_test
from credence.notify.webpush import parse_subscription
from credence.ratelimit import TokenBuckets

# Test sends per key and minute (per process): enough to check a phone, too few to spam with.
TEST_SENDS_PER_MINUTE = 4
TEST_SENDS = TokenBuckets(TEST_SENDS_PER_MINUTE)

SubscriptionIdPath = Annotated[
    str, PathParameter(pattern=ID_PATTERN, max_length=31, description="Subscription id")
]
ChannelIdPath = Annotated[
    str, PathParameter(pattern=ID_PATTERN, max_length=31, description="Channel id")
]


def _unusable(description: str) -> ResponseSpec:
    return ResponseSpec(data_container=Problem, description=description, generate_examples=False)


# --- subscriptions ---------------------------------------------------------------------------


class PushController(Controller):
    """/api/v1/push: the VAPID key, subscriptions and test sends (reviewer and admin keys)."""

    path = "/push"
    tags = ["push"]
    guards = [reviewer_or_admin]

    @get("/vapid-public-key", operation_id="getVapidPublicKey", responses=errors(403))
    async def vapid_public_key(self, request: Request, services: SharedServices) -> VapidPublicKey:
        """The server's VAPID public key, to pass as applicationServerKey when subscribing."""
        runtime = await services.push.loaded()
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
        policy = services.push.policy
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
        expiration = int(data.expiration_time) if data.expiration_time is not None else None
        created, subscription = await manage.subscribe(
            services.store, principal.key_id, parsed, expiration, services.clock()
        )
        return Response(subscription, status_code=201 if created else 200)

    @get("/subscriptions", operation_id="listPushSubscriptions", responses=errors(403))
    async def list_subscriptions(
        self, request: Request, services: SharedServices
    ) -> PushSubscriptionPage:
        """The calling key's own subscriptions."""
        key_id = principal_of(request).key_id
        return PushSubscriptionPage(items=await manage.subscriptions_of_key(services.store, key_id))

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
        if not await manage.unsubscribe(services.store, subscription_id, owner):
            raise NotFound(f"subscription {subscription_id!r} not found")

    @post("/test", operation_id="sendPushTest", status_code=200, responses=errors(403, 429))
    async def send_test(self, request: Request, services: SharedServices) -> PushTestResult:
        """Send a test notification now to the caller's devices (and, for an admin key, the
        channels); report each, a channel by its scheme and host only.

        A key may send a few tests a minute (429 with Retry-After beyond that): each one
        reaches real phones and the channels' people.
        """
        principal = principal_of(request)
        wait = TEST_SENDS.take(principal.key_id)
        if wait:
            raise TooManyRequestsException(
                detail=f"test notifications are limited per key; retry after {wait} s",
                headers={"Retry-After": str(wait)},
            )
        admin = principal.scope == "admin"
        agents = None if admin else principal.agents
        test_id, devices, channels = await send_test(
            services.store,
            services.push.http,
            await services.push.loaded(),
            services.clock,
            key_id=principal.key_id,
            agents=agents,
            include_channels=admin,
        )
        return PushTestResult(
            test_id=test_id,
            devices=[PushTestDevice(**d.__dict__) for d in devices],
            channels=[PushTestChannel(**c.__dict__) for c in channels],
        )


# --- notification actions ----------------------------------------------------------------------


async def _action_principal(
    services: SharedServices, token: str
) -> tuple[tokens.ActionClaims, Principal]:
    """What a notification's token allows, and the key it decides as (401/403 otherwise)."""
    runtime = await services.push.loaded()
    try:
        claims = tokens.verify(runtime.secret, token, services.clock())
    except tokens.TokenError as exc:
        raise NotAuthorizedException(exc.reason) from None
    principal = await manage.action_principal(services.store, claims.key_id)
    if principal is None:
        raise NotAuthorizedException("the key this notification was sent to has been revoked")
    if principal.scope == "agent":
        raise PermissionDeniedException("agent keys cannot decide on beliefs")
    return claims, principal


def _refuse_tap(belief: manage.BeliefRecord, action: str) -> None:
    """409 when a notification's button may not decide this belief (the card must)."""
    refusal = manage.tap_refusal_of(belief, action)
    if refusal is not None:
        raise ClientException(refusal, status_code=409)


async def _apply_tap(
    services: SharedServices,
    claims: tokens.ActionClaims,
    principal: Principal,
    token: str,
    action: str,
) -> Response[Belief]:
    """Decide a tapped Keep or Forget like the decision endpoints do: at the version the
    notification showed, under an Idempotency-Key derived from its token."""
    outcome = await Decisions(services.beliefs).decide(
        claims.belief_id,
        Forget() if action == "forget" else Keep(),
        principal,
        if_match=etag(claims.version),
        idempotency_key=tokens.idempotency_key(token, action),
    )
    return outcome_response(outcome)


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
    409 and nothing is decided: its notification only opens the card. So is a Keep of a belief
    that cites no source episode or cites third-party content.

    Applied exactly like the decision endpoints (same audit, under the subscribing key), at the
    belief version the notification showed (412 if it changed since), with an Idempotency-Key
    derived from the token: a retried tap returns the first answer and never applies twice.
    """
    claims, principal = await _action_principal(services, data.token)
    belief = await services.beliefs.get_record(claims.belief_id)
    if belief is not None and principal.sees_agent(belief.agent_id):
        _refuse_tap(belief, data.action)
    return await _apply_tap(services, claims, principal, data.token, data.action)


@post(
    ntfy.ACTION_PATH.removeprefix("/api/v1"),
    operation_id="applyNtfyAction",
    status_code=200,
    exclude_from_auth=True,
    tags=["push"],
    responses=errors(401, 403, 404, 409, 412),
    response_headers=ETAG_HEADER,
)
async def apply_ntfy_action(
    request: Request, services: SharedServices, data: JSONBody[PushActionIn]
) -> Response[Belief]:
    """Keep or Forget tapped in the ntfy app, authorised by the message's token alone.

    The token is single use: a second tap (either button) is a 409 and nothing is decided
    again. It is bound to the belief's version: after an edit or a decision elsewhere the tap
    is a 412 (changed) or 409 (already decided), and nothing is applied. Untrusted or unsourced
    content cannot be kept from a notification (409), nor a belief that changes another.
    """
    claims, principal = await _action_principal(services, data.token)
    belief = await services.beliefs.get_record(claims.belief_id)
    if belief is None or not principal.sees_agent(belief.agent_id):
        raise NotFound(f"belief {claims.belief_id!r} not found")
    used = await manage.action_used(
        services.store,
        principal.key_id,
        [tokens.idempotency_key(data.token, action) for action in ("keep", "forget")],
    )
    if used:
        raise ClientException("this notification's action was already used", status_code=409)
    _refuse_tap(belief, data.action)
    if belief.status != "pending":
        raise ClientException(f"this belief was already decided ({belief.status})", status_code=409)
    if belief.version != claims.version:
        raise ClientException(
            "this belief changed since the notification; open Credence to decide",
            status_code=412,
        )
    return await _apply_tap(services, claims, principal, data.token, data.action)


# --- channels (admin) ----------------------------------------------------------------------------


class PushChannelController(Controller):
    """/api/v1/push/channels: apprise URLs that get every notification (admin)."""

    path = "/push/channels"
    tags = ["push"]
    guards = [admin_only]

    @get(operation_id="listPushChannels", responses=errors(403))
    async def list_channels(self, request: Request, services: SharedServices) -> PushChannelPage:
        """Every channel, CREDENCE_APPRISE_URLS ones included, with masked URLs."""
        return PushChannelPage(items=await manage.list_channels(services.store))

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
        """Add an apprise URL (e.g. mailto://, tgram://, json://), or with ``kind`` ntfy an ntfy
        topic URL and optional ``token``: its messages carry one-tap Keep and Forget, decided
        as the calling admin key. The topic is never shown again (only scheme and host)."""
        url = data.url.strip()
        try:
            if data.kind == ntfy.KIND:
                ntfy.split_topic_url(url)
                masked = ntfy.mask_topic_url(url)
            else:
                masked = mask_channel_url(url)
        except ValueError as exc:
            raise ClientException(f"url: {exc}", status_code=422) from None
        if data.token is not None and data.kind != ntfy.KIND:
            raise ClientException("token: only for ntfy channels", status_code=422)
        return await manage.add_channel(
            services.store,
            url=url,
            masked_url=masked,
            label=data.label,
            agents=data.agents,
            kind=data.kind,
            access_token=data.token,
            key_id=principal_of(request).key_id if data.kind == ntfy.KIND else None,
            now=services.clock(),
        )

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
        await manage.remove_channel(services.store, channel_id)
