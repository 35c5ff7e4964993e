"""What the adapter's errors say: never the endpoint's key, and where things went wrong (a proxy's page, a
connection broken mid-reply, an endpoint that cannot be reached)."""

from __future__ import annotations

import socket
import traceback

import pytest
from tests.models.openai_standin import StandIn, error, stream

from podium import HumanMessage, MemoryStore, ModelError, ModelHTTPError, ReactAgent, Runtime
from podium.models import ModelRequest
from podium.models.openai import OpenAIModel

KEY = "sk-live-Secret0123456789"


def ask() -> ModelRequest:
    return ModelRequest(messages=[HumanMessage(content="Hello?")])


@pytest.mark.parametrize("key", [KEY, "proxy-token-7f3a9c"])
@pytest.mark.parametrize("streamed", [False, True])
async def test_a_key_echoed_by_the_endpoint_is_redacted(standin: StandIn, key: str, streamed: bool) -> None:
    echo = f"Invalid proxy server token passed. Received API Key = {key}, header Authorization: Bearer {key}"
    standin.script(error(401, echo))
    model = OpenAIModel("m", base_url=standin.base_url, api_key=key)
    with pytest.raises(ModelHTTPError) as caught:
        if streamed:
            async for _ in model.stream(ask()):
                pass
        else:
            await model.reply(ask())
    await model.aclose()
    assert caught.value.status_code == 401
    assert str(caught.value) == (
        "model endpoint answered 401: Invalid proxy server token passed. Received API Key = [redacted], header "
        "Authorization: Bearer [redacted]"
    )
    assert key not in "".join(traceback.format_exception(caught.value))  # nor in the chained cause


async def test_a_run_failed_by_an_echoed_key_does_not_store_it(standin: StandIn) -> None:
    standin.script(error(401, f"bad key {KEY}"))
    model = OpenAIModel("m", base_url=standin.base_url, api_key=KEY)
    result = await Runtime(MemoryStore()).send(ReactAgent("a", model), "hi", thread_id="t")
    await model.aclose()
    assert result.status == "failed"
    assert result.reason == "ModelHTTPError: model endpoint answered 401: bad key [redacted]"


async def test_a_proxys_error_page_is_quoted_with_its_status(standin: StandIn) -> None:
    page = "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>"
    standin.script(error(502, "", page=page))
    model = OpenAIModel("m", base_url=standin.base_url, max_retries=0)
    with pytest.raises(ModelHTTPError) as caught:
        await model.reply(ask())
    await model.aclose()
    assert caught.value.status_code == 502
    assert str(caught.value) == (
        "model endpoint answered 502: not an API error but a page (text/html), perhaps from a proxy or gateway in "
        "front of it: '502 Bad Gateway 502 Bad Gateway nginx'"
    )


async def test_a_connection_broken_mid_reply_is_not_an_unreachable_endpoint(standin: StandIn) -> None:
    standin.script(stream(["The ", "weather "], drop=True))
    model = OpenAIModel("m", base_url=standin.base_url)
    with pytest.raises(ModelError) as caught:
        async for _ in model.stream(ask()):
            pass
    await model.aclose()
    assert str(caught.value).startswith(
        f"the connection to the endpoint of model 'm' ({standin.base_url}) broke off before the reply was complete"
    )


async def test_an_unreachable_endpoint_is_named() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    model = OpenAIModel("m", base_url=url, max_retries=0)
    with pytest.raises(ModelError) as caught:
        await model.reply(ask())
    await model.aclose()
    assert str(caught.value).startswith(f"cannot reach the endpoint of model 'm' ({url}): ")


@pytest.mark.parametrize(
    ("body", "media_type", "problem"),
    [
        ('{"choices": [ {"message": ', "application/json", "Expecting value at position 26"),
        ("{'choices': []}", "application/json", "Expecting property name enclosed in double quotes at position 1"),
        ("<html>upstream says hello</html>", "text/html", "not JSON"),
        ("choices: none, key sk-abcdefghijkl", "text/plain", "not JSON"),
    ],
)
async def test_a_reply_of_status_200_that_is_no_json_is_a_model_error_naming_model_endpoint_and_body(
    standin: StandIn, body: str, media_type: str, problem: str
) -> None:
    standin.script(error(200, "", page=body, page_type=media_type))
    model = OpenAIModel("m-200", base_url=standin.base_url, api_key=KEY, max_retries=0)
    with pytest.raises(ModelError) as caught:
        await model.reply(ask())
    await model.aclose()
    shown = body.replace("sk-abcdefghijkl", "sk-[redacted]")
    assert str(caught.value) == (
        f"model 'm-200': the endpoint ({standin.base_url}) answered with a body that is no chat completion "
        f"({problem}): {shown}"
    )


async def test_a_run_whose_model_answers_broken_json_fails_with_the_model_error(standin: StandIn) -> None:
    standin.script(error(200, "", page='{"choices": [', page_type="application/json"))
    model = OpenAIModel("m-200", base_url=standin.base_url, api_key=KEY, max_retries=0)
    result = await Runtime(MemoryStore()).send(ReactAgent("a", model), "hi", thread_id="t")
    await model.aclose()
    assert result.status == "failed" and isinstance(result.error, ModelError)
    assert "model 'm-200'" in str(result.error) and '{"choices": [' in str(result.error)
