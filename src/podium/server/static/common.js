// What both pages share: requests with the caller's credentials, server-sent events read over fetch, and text
// rendered as DOM nodes (never as HTML: model and user text can hold markup, and none of it may run).

const KEY = "podium.apiKey";

/** A request the server refused, or could not answer (status 0). */
export class HttpError extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
  }
}

/** The API key the page sends (kept for this tab, or remembered on this device when the user asked). */
export function apiKey() {
  return sessionStorage.getItem(KEY) || localStorage.getItem(KEY) || "";
}

function storeKey(key, remember) {
  sessionStorage.setItem(KEY, key);
  if (remember) localStorage.setItem(KEY, key);
  else localStorage.removeItem(KEY);
}

/** Forget the API key (both stores). */
export function forgetKey() {
  sessionStorage.removeItem(KEY);
  localStorage.removeItem(KEY);
}

/** An element with attributes and children; strings become text nodes, so nothing in them is ever parsed. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name === "text") node.textContent = value;
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

/** The page's status line: a message (kind "error", "busy" or "info"), or nothing. */
const DOWN = "The server does not answer: is podium serve running?";

/** The server answered a request: a line saying it does not answer is out of date. */
function serverAnswered() {
  const line = document.getElementById("status");
  if (line && line.textContent === DOWN) status("");
}

export function status(message, kind = "info") {
  const line = document.getElementById("status");
  line.textContent = message || "";
  line.className = message ? `status ${kind}` : "status";
  line.hidden = !message;
}

let asking = null;

/** Ask the user for an API key (the server answered 401); resolves once one was given. */
export function askForKey(reason) {
  if (asking) return asking;
  asking = new Promise((resolve) => {
    const input = el("input", { type: "password", id: "api-key", autocomplete: "off", required: true, placeholder: "pdm_..." });
    const remember = el("input", { type: "checkbox", id: "api-key-remember" });
    const dialog = el(
      "dialog",
      { class: "key-dialog", "aria-labelledby": "key-title" },
      el(
        "form",
        { method: "dialog" },
        el("h2", { id: "key-title" }, "API key"),
        el("p", {}, reason || "This server requires an API key (podium keys create NAME prints one)."),
        el("label", { for: "api-key" }, "Key"),
        input,
        el("label", { class: "check" }, remember, " Remember on this device"),
        el("div", { class: "actions" }, el("button", { type: "submit", class: "primary" }, "Use this key")),
      ),
    );
    dialog.addEventListener("cancel", (event) => event.preventDefault());
    dialog.querySelector("form").addEventListener("submit", () => {
      storeKey(input.value.trim(), remember.checked);
      dialog.remove();
      asking = null;
      resolve();
    });
    document.body.append(dialog);
    dialog.showModal();
    input.focus();
  });
  return asking;
}

function headers(extra = {}) {
  const all = { Accept: "application/json", ...extra };
  const key = apiKey();
  if (key) all.Authorization = `Bearer ${key}`;
  return all;
}

async function detail(response) {
  try {
    const body = await response.json();
    return typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail);
  } catch {
    return response.statusText || `HTTP ${response.status}`;
  }
}

async function send(method, path, body, accept) {
  for (;;) {
    let response;
    try {
      const extra = body === undefined ? {} : { "Content-Type": "application/json" };
      if (accept) extra.Accept = accept;
      response = await fetch(path, {
        method,
        headers: headers(extra),
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch {
      throw new HttpError(0, DOWN);
    }
    serverAnswered();
    if (response.status === 401) {
      const had = apiKey();
      if (had) forgetKey();
      await askForKey(had ? "That key was refused: enter another one." : undefined);
      continue;
    }
    if (!response.ok) throw new HttpError(response.status, await detail(response));
    return response;
  }
}

/** A JSON request to the server's API; throws HttpError when it is refused. */
export async function api(method, path, body) {
  const response = await send(method, path, body);
  return response.status === 204 ? null : response.json();
}

/** A stream that was cut before the server ended it (the server stopped, the network went away). */
export const CUT = "The connection to the server was cut.";

/**
 * Read a server-sent event stream (POST with a body, or GET), calling onFrame({event, data, id}) per frame.
 * Resolves when the server ends the stream, or as soon as `signal` is aborted (the request itself is always sent
 * whole: a run the server accepted goes on). Throws HttpError (status 0) when the connection is cut.
 */
export async function stream(method, path, body, onFrame, lastEventId, signal) {
  const response = await sendStream(method, path, body, lastEventId);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const stop = () => reader.cancel().catch(() => {});
  if (signal?.aborted) return stop();
  signal?.addEventListener("abort", stop, { once: true });
  try {
    await readFrames(reader, onFrame, signal);
  } finally {
    signal?.removeEventListener("abort", stop);
  }
}

async function readFrames(reader, onFrame, signal) {
  let buffer = "";
  for (;;) {
    let chunk;
    try {
      chunk = await reader.read();
    } catch {
      if (signal?.aborted) return;
      throw new HttpError(0, CUT); // the caller reads what it missed from the store
    }
    if (chunk.done || signal?.aborted) return;
    buffer += chunk.value;
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const raw = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const frame = { event: "message", data: "", id: null };
      for (const line of raw.split("\n")) {
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") frame.event = value;
        else if (field === "data") frame.data += value;
        else if (field === "id") frame.id = value;
      }
      if (frame.data) onFrame({ ...frame, data: JSON.parse(frame.data) });
    }
  }
}

async function sendStream(method, path, body, lastEventId) {
  if (lastEventId === undefined) return send(method, path, body, "text/event-stream");
  // a rejoin: the same request with Last-Event-ID
  for (;;) {
    let response;
    try {
      response = await fetch(path, { headers: headers({ Accept: "text/event-stream", "Last-Event-ID": String(lastEventId) }) });
    } catch {
      throw new HttpError(0, DOWN);
    }
    serverAnswered();
    if (response.status === 401) {
      forgetKey();
      await askForKey();
      continue;
    }
    if (!response.ok) throw new HttpError(response.status, await detail(response));
    return response;
  }
}

const INLINE = /(\*\*[^*\n]+\*\*|`[^`\n]+`|https?:\/\/[^\s<>()"']+[^\s<>()"'.,;:!?])/;

function inline(text) {
  const out = [];
  for (const part of text.split(INLINE)) {
    if (!part) continue;
    if (part.startsWith("**") && part.endsWith("**") && part.length > 4) out.push(el("strong", {}, part.slice(2, -2)));
    else if (part.startsWith("`") && part.endsWith("`") && part.length > 2) out.push(el("code", {}, part.slice(1, -1)));
    else if (/^https?:\/\//.test(part)) out.push(el("a", { href: part, rel: "noopener noreferrer", target: "_blank" }, part));
    else out.push(document.createTextNode(part));
  }
  return out;
}

/**
 * A small, safe subset of markdown as DOM nodes: paragraphs, line breaks, lists, fenced code, **bold**, `code`
 * and http(s) links. Everything else (HTML included) stays text.
 */
export function markdown(text) {
  const fragment = document.createDocumentFragment();
  const lines = String(text ?? "").replace(/\r\n?/g, "\n").split("\n");
  let paragraph = [];
  let list = null;
  const flush = () => {
    if (paragraph.length) {
      const p = el("p");
      paragraph.forEach((line, i) => {
        if (i) p.append(el("br"));
        p.append(...inline(line));
      });
      fragment.append(p);
      paragraph = [];
    }
    list = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith("```")) {
      flush();
      const code = [];
      for (i++; i < lines.length && !lines[i].startsWith("```"); i++) code.push(lines[i]);
      fragment.append(el("pre", {}, el("code", {}, code.join("\n"))));
      continue;
    }
    const item = /^\s*(?:[-*]|\d+\.)\s+(.*)$/.exec(line);
    if (item) {
      if (paragraph.length) flush();
      if (!list) {
        list = el(/^\s*\d/.test(line) ? "ol" : "ul");
        fragment.append(list);
      }
      list.append(el("li", {}, ...inline(item[1])));
      continue;
    }
    if (!line.trim()) {
      flush();
      continue;
    }
    list = null;
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (heading) {
      flush();
      fragment.append(el("p", { class: "heading" }, el("strong", {}, heading[1])));
      continue;
    }
    paragraph.push(line);
  }
  flush();
  return fragment;
}

/** A value as readable text: strings as they are, anything else as indented JSON. */
export function asText(value) {
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}
