// The chat page: one app's conversations drawn from the thread's stored events, runs streamed live (`events`
// stream mode), questions answered with `command.resume`. Everything the page shows comes from the public API.
import { CUT, HttpError, api, asText, askForKey, el, forgetKey, markdown, status, stream } from "./common.js";

const $ = (id) => document.getElementById(id);
const DEFAULT_APP = "smart-investigator";
const RECONNECTS = 8; // attempts to reach the server again after a stream was cut (about a minute in all)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const page = {
  apps: [],
  app: null,
  thread: null,
  loading: true, // the page, then a conversation, is being loaded: nothing can be sent yet
  opening: 0, // counts the conversations opened, so that only the latest one ends the loading
  download: null, // the object URL of the shown artifact's download (let go when another one is shown)
};

// What the drawn conversation holds; a new one for each conversation opened. Every request the page makes for a
// conversation holds its view, and draws nothing once that view is no longer the one on screen.
let view;

function resetView(thread) {
  view?.left.abort(); // stop reading the streams of the conversation left (its runs go on in the server)
  view = {
    thread, // its thread id (null until a new conversation's first message creates it)
    left: new AbortController(), // aborted when the page shows another conversation
    busy: false, // a message is being sent, or a run of this thread is followed
    refreshing: null, // a catch-up in progress (a promise): a message is sent after it, never beside it
    lastSeq: 0, // the last event drawn, of this thread only
    calls: new Map(), // tool call id -> its folded element
    tools: new Map(), // tool call id -> the tool's name
    pending: new Map(), // interrupt id -> {item, interrupt}
    stream: null, // the reply being streamed token by token
    skipHuman: null, // an answer already drawn, echoed next as a human message
    reconnecting: false, // the server was lost: the banner says so until it answers again
    joined: false, // following a run joined part way: a reply streaming now may lack its first words
    artifacts: [],
  };
  $("messages").replaceChildren();
  $("notes").replaceChildren();
  $("tasks").replaceChildren();
  $("artifacts").replaceChildren();
  $("artifact").replaceChildren(el("p", { class: "empty" }, "Nothing yet: documents the agents make appear here."));
  $("tasks-empty").hidden = false;
  $("notes-empty").hidden = false;
  updateHint();
}

function scrollDown() {
  const list = $("messages");
  list.scrollTop = list.scrollHeight;
}

function bubble(role, ...children) {
  const item = el("li", { class: `msg ${role}` }, ...children);
  const typing = document.querySelector("#messages .typing");
  if (typing && role !== "typing") typing.before(item); // "working…" stays last, under what the run has said
  else $("messages").append(item);
  scrollDown();
  return item;
}

function assistantBubble(text, name) {
  const body = el("div", { class: "body" }, markdown(text));
  return bubble("assistant", name ? el("span", { class: "who" }, name) : null, body, el("div", { class: "calls" }));
}

function welcome() {
  const app = page.apps.find((a) => a.assistant_id === page.app);
  const greeting = app && ((app.metadata && app.metadata.welcome) || app.description); // the app's own welcome first
  if (greeting) bubble("assistant welcome", el("div", { class: "body" }, markdown(greeting)));
}

function foldCall(item, call) {
  const result = el("div", { class: "result pending" }, "running…");
  const fold = el(
    "details",
    { class: "call" },
    el("summary", {}, el("span", { class: "tool" }, call.name), " ", el("span", { class: "args" }, argsLine(call.args))),
    el("pre", { class: "args-full" }, asText(call.args)),
    result,
  );
  item.querySelector(".calls").append(fold);
  view.calls.set(call.id, result);
  view.tools.set(call.id, call.name);
}

function argsLine(args) {
  const text = typeof args === "string" ? args : JSON.stringify(args);
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

function toolResult(message) {
  let result = view.calls.get(message.tool_call_id);
  if (!result) {
    const item = assistantBubble("");
    foldCall(item, { id: message.tool_call_id, name: message.name || "tool", args: "" });
    result = view.calls.get(message.tool_call_id);
  }
  result.className = message.is_error ? "result error" : "result";
  result.replaceChildren(el("span", { class: "label" }, message.is_error ? "error: " : "result: "), asText(message.content));
}

/** The agent whose answer `event` is, when it is a worker reporting to the agent above it, not a reply to the person
 * (its name differs from the agent whose path it is under: the supervisor then answers the person itself). */
function reporter(event) {
  const message = event.message;
  const top = event.path && event.path.length ? event.path[event.path.length - 1] : null;
  return message.kind === "ai" && message.content && message.name && top && message.name !== top ? message.name : null;
}

function addMessage(message, reportedBy = null) {
  view.joined = false; // the next reply streams from its start
  if (message.kind === "human") {
    view.stream = null;
    if (view.skipHuman !== null && message.content === view.skipHuman) {
      view.skipHuman = null;
      return;
    }
    view.skipHuman = null;
    bubble("user", el("div", { class: "body" }, markdown(message.content)));
  } else if (message.kind === "ai") {
    let item = view.stream;
    view.stream = null;
    if (item) {
      item.classList.remove("streaming");
      item.querySelector(".body").replaceChildren(markdown(message.content));
    } else if (message.content || message.tool_calls.length) {
      item = assistantBubble(message.content, reportedBy ? `${reportedBy} reported` : null);
      if (reportedBy) item.classList.add("report");
    }
    if (item && !message.content) item.classList.add("only-calls");
    for (const call of message.tool_calls || []) {
      let args = call.arguments;
      try {
        args = JSON.parse(call.arguments || "{}");
      } catch {
        /* shown as sent */
      }
      foldCall(item, { id: call.id, name: call.name, args });
    }
  } else if (message.kind === "tool") {
    toolResult(message);
  }
}

function addToken(text) {
  if (!view.stream) {
    view.stream = assistantBubble("");
    view.stream.classList.add("streaming");
    // a reply joined part way (after a reload or a restart): its first words went by before; it is drawn whole
    // from the store when it ends
    view.stream.querySelector(".body").append(el("p", {}, view.joined ? "… " : ""));
  }
  const paragraph = view.stream.querySelector(".body p:last-child") || view.stream.querySelector(".body");
  paragraph.append(text);
  scrollDown();
}

function addNote(event) {
  $("notes-empty").hidden = true;
  // a path part that is a tool call's id is said as the tool's name; run and question ids are left out
  const where = event.path
    .map((p) => view.tools.get(p) || p)
    .filter((p) => !/^[0-9a-f]{8}-\d+$/.test(p) && !/^(i|ask)\d+$/.test(p) && !/^call_\w+$/.test(p));
  $("notes").append(
    el(
      "li",
      { class: `note ${event.channel}` },
      el("span", { class: "channel" }, event.channel),
      el("span", { class: "where" }, where.slice(-1)[0] || ""),
      el("span", { class: "text" }, event.text),
    ),
  );
  $("notes").scrollTop = $("notes").scrollHeight;
}

function showArtifact(index) {
  const artifact = view.artifacts[index];
  const text = asText(artifact.content);
  const copy = el("button", { type: "button", class: "quiet" }, "Copy");
  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text);
      copy.textContent = "Copied";
    } catch {
      copy.textContent = "Select the text to copy";
    }
  });
  const download = el("a", { class: "button quiet", download: `${artifact.title || "artifact"}.txt` }, "Download");
  if (page.download) URL.revokeObjectURL(page.download); // the artifact shown before: its file is let go
  page.download = download.href = URL.createObjectURL(new Blob([text], { type: "text/plain" }));
  $("artifact").replaceChildren(
    el("div", { class: "artifact-head" }, el("h3", {}, artifact.title || "Artifact"), el("div", { class: "actions" }, copy, download)),
    el("div", { class: "artifact-body" }, typeof artifact.content === "string" ? markdown(text) : el("pre", {}, text)),
  );
  for (const [i, item] of [...$("artifacts").children].entries()) item.classList.toggle("current", i === index);
}

function addArtifact(event) {
  view.artifacts.push({ title: event.title, content: event.content });
  const index = view.artifacts.length - 1;
  $("artifacts").append(
    el("li", {}, el("button", { type: "button", class: "link", onclick: () => showArtifact(index) }, `${index + 1}. ${event.title || "artifact"}`)),
  );
  showArtifact(index);
}

function showStack(stack) {
  $("tasks-empty").hidden = stack.length > 0;
  $("tasks").replaceChildren(
    ...[...stack].reverse().map((entry, i) => {
      const task = entry.task || {};
      const expectation = task.expectation || {};
      const waits = expectation.description || (expectation.options || []).join(" / ") || task.content || "";
      return el(
        "li",
        { class: i === 0 ? "task top" : "task" },
        el("span", { class: "tool" }, entry.parent_tool),
        i === 0 ? el("span", { class: "badge" }, "current") : null,
        task.content ? el("span", { class: "asks" }, task.content) : null,
        el("span", { class: "waits" }, `waits for ${entry.target === "human" ? "you" : entry.target}: ${waits}`),
      );
    }),
  );
}

/** A tool call's approval: approve it, reject it (with what is typed as the reason), or edit its arguments. */
function approvalButtons(interrupt, options) {
  const args = (interrupt.data && interrupt.data.approval && interrupt.data.approval.arguments) || {};
  const reject = () => {
    const why = $("input").value.trim();
    if (why) $("input").value = "";
    answer(why ? `reject: ${why}` : "reject");
  };
  const edit = () => {
    const input = $("input");
    input.value = `edit: ${JSON.stringify(args)}`;
    input.focus();
    input.setSelectionRange("edit: ".length, input.value.length);
  };
  options.append(
    el("button", { type: "button", class: "option", "data-option": "approve", onclick: () => answer("approve") }, "Approve"),
    el("button", { type: "button", class: "option", "data-option": "edit", onclick: edit }, "Edit"),
    el("button", { type: "button", class: "option", "data-option": "reject", onclick: reject }, "Reject"),
  );
}

function addQuestion(interrupt) {
  const expectation = interrupt.expectation || { type: "text", options: [] };
  const options = el("div", { class: "options" });
  if (expectation.type === "approval") approvalButtons(interrupt, options);
  else {
    for (const option of expectation.options || []) {
      options.append(el("button", { type: "button", class: "option", "data-option": option, onclick: () => answer(option) }, option));
    }
  }
  const hint =
    expectation.type === "approval"
      ? "Approve the call, edit its arguments (then send them), or reject it: type a reason first to give one"
      : expectation.type === "choice"
        ? "Choose one"
        : expectation.description || (expectation.type === "pattern" ? "" : "Answer in your words");
  const item = bubble(
    "assistant question",
    el("span", { class: "who" }, "Question"),
    el("div", { class: "body" }, markdown(interrupt.prompt)),
    hint ? el("p", { class: "expects" }, hint) : null,
    options.childElementCount ? options : null,
  );
  view.pending.set(interrupt.id, { item, interrupt });
}

function answered(interruptId, text) {
  const pending = view.pending.get(interruptId);
  if (!pending) return;
  view.pending.delete(interruptId);
  pending.item.classList.add("answered");
  for (const button of pending.item.querySelectorAll("button.option")) {
    button.disabled = true;
    if (button.dataset.option === text || text.startsWith(`${button.dataset.option}:`)) button.classList.add("chosen");
  }
  bubble("user", el("div", { class: "body" }, markdown(text)));
  view.skipHuman = text;
}

function ended(event) {
  if (view.stream) view.stream.classList.remove("streaming");
  view.stream = null;
  if (event.status !== "interrupted") {
    for (const { item } of view.pending.values()) {
      item.classList.add("answered");
      for (const button of item.querySelectorAll("button.option")) button.disabled = true;
    }
    view.pending.clear();
  }
  if (event.status === "failed" || event.status === "limit_exceeded") {
    bubble("error", el("div", { class: "body" }, `The run ${event.status === "failed" ? "failed" : "hit a limit"}: ${event.reason}`));
  } else if (event.status === "cancelled") {
    bubble("notice", el("div", { class: "body" }, `The run was cancelled${event.reason ? `: ${event.reason}` : ""}.`));
  }
}

/** Draw one event of the thread (stored or live). */
function apply(event) {
  if (event.seq) {
    if (event.seq <= view.lastSeq) return;
    view.lastSeq = event.seq;
  }
  switch (event.kind) {
    case "message":
      // hand-back bookkeeping (a worker's transfer back to its supervisor) is control flow, not conversation
      if (event.namespace === "" && !event.message.metadata?.handoff_back) addMessage(event.message, reporter(event));
      break;
    case "token":
      // only a reply to the thread's history is what a person reads (not a task's message to another task)
      if (event.path.length <= 1 && !event.namespace) addToken(event.text);
      break;
    case "side":
      addNote(event);
      break;
    case "artifact":
      addArtifact(event);
      break;
    case "task_stack":
      if (event.path.length <= 1) showStack(event.stack);
      break;
    case "interrupt":
      addQuestion(event.interrupt);
      break;
    case "answer":
      if (event.key && event.key.endsWith("!")) answered(event.key.slice(0, -1), event.answer);
      break;
    case "run_ended":
      ended(event);
      break;
    case "error":
      addNote({ ...event, channel: "error", text: `${event.error}: ${event.message}` });
      break;
    default:
      break;
  }
  updateHint();
}

function waiting(v = view) {
  return [...v.pending.values()].at(-1);
}

function updateHint() {
  const question = waiting();
  const hint = $("hint");
  if (!question) {
    hint.hidden = true;
    $("input").placeholder = "Type a message (Enter sends, Shift+Enter for a new line)";
    return;
  }
  const expectation = question.interrupt.expectation || {};
  const what =
    expectation.type === "approval"
      ? "your approval: approve, reject (reject: why) or edit: {arguments}"
      : expectation.type === "choice"
        ? `one of: ${expectation.options.join(", ")}`
        : expectation.description || "your answer";
  hint.textContent = `The agent waits for ${what}.`;
  hint.hidden = false;
  $("input").placeholder = "Answer the question, or ask something else";
}

function setBusy(v, busy) {
  v.busy = busy;
  if (v !== view) return;
  $("send").disabled = busy || page.loading;
  $("conversation").setAttribute("aria-busy", String(busy));
  const typing = document.querySelector("#messages .typing");
  if (busy && !typing) bubble("typing", el("span", { class: "dots", "aria-label": "working" }, "working…"));
  if (!busy && typing) typing.remove();
}

function setLoading(loading) {
  page.loading = loading;
  $("send").disabled = loading || view.busy;
}

/**
 * Show the app and conversation in the address: a switch is a step that Back undoes (`replace`: the same step, as
 * when a new conversation gets its thread, or Back and Forward themselves).
 */
function setUrl(replace = false) {
  const params = new URLSearchParams({ app: page.app });
  if (page.thread) params.set("thread", page.thread);
  const url = `/?${params}`;
  if (url === location.pathname + location.search) return;
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
}

/** Back and Forward: open the app and conversation the address names. */
function followAddress() {
  const params = new URLSearchParams(location.search);
  const app = params.get("app");
  if (app && app !== page.app && page.apps.some((a) => a.assistant_id === app)) {
    page.app = app;
    $("app").value = app;
    loadThreads();
  }
  const thread = params.get("thread");
  if (thread !== page.thread) openThread(thread, true);
}

/** Draw what the thread stored since the last event drawn, while `v` is the conversation on screen. */
async function catchUp(v) {
  const events = await api("GET", `/threads/${v.thread}/events?after=${v.lastSeq}`);
  if (v === view) for (const event of events) apply(event);
}

function onFrame(v, frame) {
  if (v !== view) return; // a frame of a conversation the page has left
  if (frame.event === "events") apply(frame.data);
  else if (frame.event === "error") status(`The run failed: ${frame.data.message}`, "error");
}

/** The run to follow on a busy thread: the one running, else the first one queued (runs are listed newest first). */
async function currentRun(thread) {
  const runs = await api("GET", `/threads/${thread}/runs?limit=100`);
  return runs.find((run) => run.status === "running") || runs.filter((run) => run.status === "pending").at(-1);
}

/**
 * Bring the conversation `v` up to date: the stored events, then each run of the thread while it is busy (another
 * tab's, a queued one, or a run the server resumed after a restart), rejoined from the last event drawn.
 */
async function follow(v) {
  for (;;) {
    await catchUp(v);
    if (v.reconnecting && v === view) status(""); // the server answers again: the reply may be streaming anew
    v.reconnecting = false;
    const thread = await api("GET", `/threads/${v.thread}`);
    if (v !== view || thread.status !== "busy") return;
    setBusy(v, true);
    const run = await currentRun(v.thread);
    if (v !== view) return;
    const seen = v.lastSeq;
    if (run) {
      v.joined = true; // a run under way: its reply may be part way through
      const path = `/threads/${v.thread}/runs/${run.run_id}/stream?stream_mode=events`;
      await stream("GET", path, undefined, (frame) => onFrame(v, frame), v.lastSeq, v.left.signal);
    }
    if (v.lastSeq === seen) await sleep(300); // between two runs: the next one has not started yet
  }
}

/** Like follow, and when the server cannot be reached, try again a few times (it may be restarting). */
async function keepUp(v) {
  for (let attempt = 1; ; attempt++) {
    try {
      await follow(v);
      if (attempt > 1 && v === view) status("");
      return;
    } catch (error) {
      if (v !== view) return;
      if (!(error instanceof HttpError && error.status === 0) || attempt > RECONNECTS) throw error;
      if (v.stream) v.stream.remove(); // a half-streamed reply: it is drawn again whole from the store
      v.stream = null;
      v.reconnecting = true;
      status(`The connection to the server was lost. Reconnecting (attempt ${attempt} of ${RECONNECTS})…`, "busy");
      await sleep(Math.min(500 * 2 ** attempt, 10_000));
    }
  }
}

function failed(error) {
  if (error instanceof HttpError && error.status === 0) {
    return error.message === CUT ? "The connection to the server was lost: reload the page once it runs again." : error.message;
  }
  return error instanceof HttpError ? error.message : String(error);
}

/** Send `text` in the conversation on screen; resolves to whether the server took it. */
async function say(text) {
  const v = view;
  if (v.refreshing) await v.refreshing; // tokens carry no seq: two streams of one run would draw them twice
  if (v.busy || page.loading || !text.trim() || v !== view) return false;
  setBusy(v, true);
  status("");
  let taken = false;
  try {
    if (!v.thread) {
      const name = Array.from(text).slice(0, 60).join(""); // whole characters: half an emoji is no text
      const thread = await api("POST", "/threads", { metadata: { assistant_id: page.app, graph_id: page.app, title: name } });
      v.thread = thread.thread_id;
      if (v === view) {
        page.thread = v.thread;
        setUrl(true);
        $("thread-title").textContent = name;
        $("rename").hidden = false;
      }
    }
    const body = { assistant_id: page.app, stream_mode: ["events"] };
    const question = waiting(v);
    if (question) body.command = { resume: v.pending.size === 1 ? text : { [question.interrupt.id]: text } };
    else body.input = { messages: [{ role: "user", content: text }] };
    const started = (frame) => {
      taken = true;
      onFrame(v, frame);
    };
    await stream("POST", `/threads/${v.thread}/runs/stream`, body, started, undefined, v.left.signal);
    taken = true;
    await keepUp(v);
  } catch (error) {
    if (v !== view) return taken;
    if (error instanceof HttpError && error.status === 409) {
      // the thread changed elsewhere (another tab asked a question, or runs): show it as it is now
      status("This conversation changed in another window. It is shown again as it is now: send your message again.", "error");
      setBusy(v, false);
      await keepUp(v).catch((e) => status(failed(e), "error"));
    } else {
      status(failed(error), "error");
    }
  } finally {
    setBusy(v, false);
    if (v === view) loadThreads();
  }
  return taken;
}

function answer(option) {
  if (view.busy || page.loading) return;
  $("input").focus(); // the option's button is disabled once answered: focus goes back to the input
  say(option);
}

/** Catch up with what another tab or client did in this conversation (when the page comes back into view). */
async function refreshShown() {
  const v = view;
  if (!v.thread || v.busy || v.refreshing || page.loading) return;
  v.refreshing = keepUp(v)
    .catch((error) => v === view && status(failed(error), "error"))
    .finally(() => {
      v.refreshing = null;
      setBusy(v, false);
    });
  await v.refreshing;
}

async function openThread(threadId, replace = false) {
  const opening = ++page.opening;
  page.thread = threadId;
  resetView(threadId);
  const v = view;
  setBusy(v, false);
  setUrl(replace);
  markCurrent();
  welcome();
  if (!threadId) {
    $("thread-title").textContent = "New conversation";
    $("rename").hidden = true;
    setLoading(false);
    return;
  }
  status("Loading the conversation…", "busy");
  setLoading(true); // what is sent now would be drawn, then wiped when the conversation arrives
  let thread;
  try {
    thread = await api("GET", `/threads/${threadId}`);
    if (v !== view) return;
    $("thread-title").textContent = title(thread);
    $("rename").hidden = false;
    await catchUp(v);
    if (v === view) status("");
  } catch (error) {
    if (v !== view) return;
    status(error.status === 404 ? "That conversation does not exist (or is not yours)." : error.message, "error");
    if (error.status === 404 && opening === page.opening) openThread(null, true);
    return;
  } finally {
    if (opening === page.opening) setLoading(false);
  }
  if (thread.status === "busy") await refreshShown();
}

function title(thread) {
  const meta = thread.metadata || {};
  if (meta.title) return meta.title;
  const first = ((thread.values || {}).messages || []).find((m) => m.type === "human");
  return first ? Array.from(String(first.content)).slice(0, 60).join("") : "Conversation";
}

function markCurrent() {
  for (const item of $("threads").children) {
    const current = item.dataset.thread === page.thread;
    item.classList.toggle("current", current);
    item.querySelector("button")?.setAttribute("aria-current", current ? "true" : "false");
  }
}

async function loadThreads() {
  try {
    const threads = await api("POST", "/threads/search", {
      metadata: { assistant_id: page.app },
      limit: 100,
      sort_by: "updated_at",
      sort_order: "desc",
    });
    $("threads").replaceChildren(
      ...threads.map((thread) =>
        el(
          "li",
          { "data-thread": thread.thread_id },
          el(
            "button",
            { type: "button", class: "thread", onclick: () => openThread(thread.thread_id) },
            el("span", { class: "name" }, title(thread)),
            el("span", { class: `badge ${thread.status}` }, thread.status === "interrupted" ? "waiting for you" : thread.status),
          ),
        ),
      ),
    );
    if (!threads.length) $("threads").append(el("li", { class: "empty" }, "No conversation yet."));
    markCurrent();
  } catch (error) {
    status(error.message, "error");
  }
}

async function rename() {
  const name = prompt("Name this conversation", $("thread-title").textContent);
  if (!name || !page.thread) return;
  await api("PATCH", `/threads/${page.thread}`, { metadata: { title: name } });
  $("thread-title").textContent = name;
  loadThreads();
}

async function start() {
  resetView(null);
  $("composer").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("input").value;
    if (!text.trim() || view.busy || page.loading) return;
    $("input").value = "";
    const v = view;
    say(text).then((taken) => {
      if (!taken && v === view && !$("input").value) $("input").value = text; // nothing was sent: keep what was typed
    });
  });
  $("input").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      $("composer").requestSubmit();
    }
  });
  $("new-thread").addEventListener("click", () => {
    openThread(null);
    $("input").focus();
  });
  $("rename").addEventListener("click", () => rename().catch((error) => status(error.message, "error")));
  $("key").addEventListener("click", async () => {
    forgetKey();
    await askForKey("Enter the API key to use with this server.");
    location.reload();
  });
  // another tab or client may have changed the conversation while this one was in the background
  document.addEventListener("visibilitychange", () => document.visibilityState === "visible" && refreshShown());
  window.addEventListener("focus", () => refreshShown());
  $("app").addEventListener("change", () => {
    page.app = $("app").value;
    loadThreads();
    openThread(null);
  });
  status("Connecting…", "busy");
  try {
    page.apps = await api("POST", "/assistants/search", { limit: 100 });
  } catch (error) {
    status(error.message, "error");
    return;
  }
  status("");
  const params = new URLSearchParams(location.search);
  const names = page.apps.map((a) => a.assistant_id);
  page.app = [params.get("app"), DEFAULT_APP, names[0]].find((name) => name && names.includes(name));
  $("app").replaceChildren(...names.map((name) => el("option", { value: name, selected: name === page.app }, name)));
  await loadThreads();
  $("input").disabled = false; // typing may start; sending waits until the conversation is loaded
  $("input").focus();
  window.addEventListener("popstate", followAddress);
  await openThread(params.get("thread"), true);
}

start();
