// The plan page (seed 002): a task becomes a plan of steps; the human approves, rejects (with a comment) or edits
// each step, approves all, answers the planner's questions; the page follows the plan live while steps run.
import { HttpError, api, askForKey, el, forgetKey, status } from "./common.js";

const $ = (id) => document.getElementById(id);
const POLL_MS = 700;

const page = {
  session: null,
  plan: null, // the plan shown (the newest version of its session)
  sending: false,
  timer: null,
  lastStatus: null,
  unreachable: false, // the last poll could not reach the server: its error is shown until a poll gets through
  decided: new Set(), // the steps a verdict was given on here: never offered again, whatever a late read says
};

const label = (value) => String(value || "").replaceAll("_", " ");

function showError(error) {
  status(error instanceof HttpError ? error.message : String(error), "error");
}

function setUrl() {
  const params = new URLSearchParams();
  if (page.session) params.set("session", page.session);
  if (page.plan) params.set("plan", page.plan.id);
  history.replaceState(null, "", `/plan${params.size ? `?${params}` : ""}`);
}

const STOPPED = "stopped by the human"; // the reason the service records for a plan, and a step, the human stopped

/** What a plan's badge says: its status, except that a plan the human stopped says so (its status is "completed"
 * when a step was done before the stop, like a plan done to the end). */
function planState(plan) {
  return (plan.reason || "").startsWith(STOPPED) ? "stopped" : plan.overall_status;
}

async function loadPlans() {
  let plans;
  try {
    plans = await api("GET", "/plans");
  } catch (error) {
    if (!(error instanceof HttpError && error.status === 404)) throw error;
    $("plans-empty").textContent = `No plans: ${error.message}.`; // the server serves no plan app
    $("plans-empty").hidden = false;
    return;
  }
  const newest = new Map();
  for (const plan of plans) {
    const seen = newest.get(plan.session_id);
    if (!seen || plan.version > seen.version) newest.set(plan.session_id, plan);
  }
  const shown = [...newest.values()].sort((a, b) => b.ts - a.ts);
  $("plans-empty").hidden = shown.length > 0;
  $("plans").replaceChildren(
    ...shown.map((plan) =>
      el(
        "li",
        { "data-session": plan.session_id, class: plan.session_id === page.session ? "current" : null },
        el(
          "button",
          { type: "button", onclick: () => open(plan.session_id, true) },
          el("span", {}, plan.initial_goal),
          el("span", {}, el("span", { class: `badge ${planState(plan)}` }, label(planState(plan))), ` v${plan.version}`),
        ),
      ),
    ),
  );
}

function stepItem(step) {
  const item = el("li", { class: "step", "data-step": step.id });
  const comment = el("input", { type: "text", "aria-label": "Why reject this step?", placeholder: "Why? (sent to the planner and the agents)" });
  const edited = el("input", { type: "text", "aria-label": "New action" });
  const reject = el(
    "form",
    { class: "reject-form", hidden: true },
    el("div", { class: "row" }, comment, el("button", { type: "submit", class: "danger" }, "Reject step")),
  );
  const edit = el(
    "form",
    { class: "edit-form", hidden: true },
    el("div", { class: "row" }, edited, el("button", { type: "submit", class: "primary" }, "Approve edited action")),
  );
  const toggle = (form, focus) => {
    const opening = form.hidden;
    reject.hidden = true;
    edit.hidden = true;
    form.hidden = !opening;
    if (opening) focus.focus();
  };
  reject.addEventListener("submit", (event) => {
    event.preventDefault();
    verdict(item.step, { approved: false, human_feedback: comment.value.trim() || null });
  });
  edit.addEventListener("submit", (event) => {
    event.preventDefault();
    if (edited.value.trim()) verdict(item.step, { approved: true, updated_action: edited.value.trim() });
  });
  item.append(
    el(
      "div",
      { class: "step-head" },
      el("span", { class: "order" }),
      el("span", { class: "agent" }),
      el("span", { class: "badge state" }),
    ),
    el("p", { class: "action" }),
    el("p", { class: "feedback", hidden: true }),
    el(
      "div",
      { class: "buttons" },
      el("button", { type: "button", class: "primary approve", onclick: () => verdict(item.step, { approved: true }) }, "Approve"),
      el("button", { type: "button", class: "reject", onclick: () => toggle(reject, comment) }, "Reject"),
      el(
        "button",
        {
          type: "button",
          class: "edit",
          onclick: () => {
            edited.value = item.step.updated_action || item.step.action;
            toggle(edit, edited);
          },
        },
        "Edit",
      ),
    ),
    reject,
    edit,
    el("ul", { class: "said" }),
  );
  return item;
}

function saidText(message) {
  // the human's verdicts are stored as JSON: say them in words
  if (message.source !== "HumanAgent") return message.content;
  try {
    const verdict = JSON.parse(message.content);
    if (verdict.clarification) return `clarified: ${verdict.clarification}`;
    const words = [verdict.approved ? "approved" : "rejected"];
    if (verdict.all) words.push("every remaining step");
    if (verdict.updated_action) words.push(`with the action "${verdict.updated_action}"`);
    if (verdict.human_feedback) words.push(`(${verdict.human_feedback})`);
    return words.join(" ");
  } catch {
    return message.content;
  }
}

function drawStep(item, step, said) {
  item.step = step;
  item.className = `step ${step.status}`;
  item.querySelector(".order").textContent = `${step.order}.`;
  item.querySelector(".agent").textContent = step.agent;
  const badge = item.querySelector(".state");
  badge.className = `badge state ${step.status}`;
  badge.textContent = label(step.status);
  item.querySelector(".action").textContent = step.updated_action || step.action;
  const feedback = item.querySelector(".feedback");
  const notes = [];
  if (step.updated_action) notes.push(`Edited from: ${step.action}`);
  if (step.human_feedback === STOPPED) notes.push("The plan was stopped here.");
  else if (step.human_feedback) notes.push(`Your comment: ${step.human_feedback}`);
  feedback.textContent = notes.join(" · ");
  feedback.hidden = !notes.length;
  // a step just decided may still read as waiting for a moment (the verdict is taken before the step moves on, and
  // a read sent before may come back after one that saw it decided): a decided step never waits again
  const waiting =
    step.status === "awaiting_feedback" && page.plan.overall_status === "in_progress" && !page.decided.has(step.id);
  for (const button of item.querySelectorAll("button")) button.disabled = !waiting || page.sending;
  item.querySelector(".buttons").hidden = !waiting;
  if (!waiting) for (const form of item.querySelectorAll("form")) form.hidden = true;
  const lines = said.map((m) => el("li", {}, el("strong", {}, `${m.source === "HumanAgent" ? "You" : m.source}: `), saidText(m)));
  if (step.error) lines.push(el("li", { class: "error-text" }, `Failed: ${step.error}`));
  const list = item.querySelector(".said");
  if (list.childElementCount !== lines.length || list.textContent !== lines.map((l) => l.textContent).join("")) {
    list.replaceChildren(...lines);
  }
}

function draw(plan, messages) {
  page.plan = plan;
  $("plan").hidden = false;
  $("goal").textContent = plan.initial_goal;
  $("plan-status").className = `badge ${planState(plan)}`;
  $("plan-status").textContent = label(planState(plan));
  $("version").textContent = `version ${plan.version}`;
  const done = plan.steps.filter((s) => s.status === "completed").length;
  const rejected = plan.steps.filter((s) => s.status === "rejected").length;
  const counts = `${done} of ${plan.steps.length} steps done${rejected ? `, ${rejected} rejected` : ""}.`;
  $("summary").textContent = `${plan.summary || ""} ${counts}`.trim();
  $("plan-reason").textContent = plan.reason ? `Why: ${plan.reason}` : "";
  $("plan-reason").hidden = !plan.reason;
  const asking = plan.human_clarification_request && !plan.human_clarification_response;
  $("clarify").hidden = !asking || plan.overall_status !== "in_progress";
  $("clarify-question").textContent = asking ? plan.human_clarification_request : "";
  const open = plan.overall_status === "in_progress";
  for (const button of document.querySelectorAll("#clarify button, #more button")) button.disabled = page.sending;
  $("approve-all").disabled = !open || page.sending || !plan.steps.some((s) => s.status === "awaiting_feedback");
  $("add-info").hidden = !open && plan.overall_status !== "failed";
  const byStep = new Map();
  const planner = [];
  for (const message of messages) {
    if (message.plan_id !== plan.id) continue;
    if (message.step_id) byStep.set(message.step_id, [...(byStep.get(message.step_id) || []), message]);
    else planner.push(message);
  }
  const list = $("steps");
  const items = new Map([...list.children].map((item) => [item.dataset.step, item]));
  const wanted = plan.steps.map((step) => {
    const item = items.get(step.id) || stepItem(step);
    drawStep(item, step, byStep.get(step.id) || []);
    return item;
  });
  if (wanted.length !== list.children.length || wanted.some((item, i) => list.children[i] !== item)) list.replaceChildren(...wanted);
  const said = planner.map((m) => el("li", {}, m.content));
  if ($("planner-said").textContent !== said.map((l) => l.textContent).join("")) $("planner-said").replaceChildren(...said);
}

async function refresh() {
  if (!page.session) return;
  const session = page.session;
  const [plans, messages] = await Promise.all([
    api("GET", `/plans?session_id=${encodeURIComponent(session)}`),
    api("GET", `/agent_messages/${encodeURIComponent(session)}`),
  ]);
  if (session !== page.session || !plans.length) return;
  const newest = plans.reduce((a, b) => (b.version > a.version ? b : a));
  draw(newest, messages);
  setUrl();
  const now = `${newest.id}:${newest.overall_status}`;
  if (now !== page.lastStatus) {
    page.lastStatus = now;
    loadPlans().catch(showError);
  }
}

function follow() {
  clearTimeout(page.timer);
  const tick = async () => {
    try {
      await refresh();
      if (page.unreachable) status(""); // the server is back
      page.unreachable = false;
    } catch (error) {
      page.unreachable = error instanceof HttpError && error.status === 0;
      showError(error);
    }
    const running = page.plan && page.plan.overall_status === "in_progress";
    if (running && page.session) page.timer = setTimeout(tick, POLL_MS);
  };
  page.timer = setTimeout(tick, POLL_MS);
}

async function act(what) {
  page.sending = true;
  for (const button of document.querySelectorAll("#plan button")) button.disabled = true;
  try {
    await what();
    status("");
    await refresh();
  } catch (error) {
    showError(error);
  } finally {
    page.sending = false;
    // the forms are not redrawn when the refresh fails: unlock them here (the steps unlock as they are drawn)
    for (const button of document.querySelectorAll("#clarify button, #more button")) button.disabled = false;
    await refresh().catch(showError);
    follow();
  }
}

function verdict(step, body) {
  return act(async () => {
    await api("POST", "/human_feedback", { step_id: step.id, plan_id: page.plan.id, session_id: page.session, ...body });
    page.decided.add(step.id);
  });
}

function clarify(text) {
  return act(() =>
    api("POST", "/human_clarification_on_plan", { plan_id: page.plan.id, session_id: page.session, human_clarification: text }),
  );
}

/** Show the plans of `session`; `step`: as a step Back undoes (a plan picked or made, not Back and Forward). */
async function open(session, step = false) {
  if (step && session !== page.session) history.pushState(null, "", `/plan?${new URLSearchParams({ session })}`);
  page.session = session;
  page.plan = null;
  page.lastStatus = null;
  $("steps").replaceChildren();
  $("clarify-answer").value = ""; // an answer typed for another plan
  for (const item of $("plans").children) item.classList.toggle("current", item.dataset.session === session);
  status("Loading the plan…", "busy");
  try {
    await refresh();
    status("");
  } catch (error) {
    showError(error);
  }
  follow();
}

async function start() {
  $("key").addEventListener("click", async () => {
    forgetKey();
    await askForKey("Enter the API key to use with this server.");
    location.reload();
  });
  $("task-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const description = $("task").value.trim();
    if (!description || page.sending) return;
    page.sending = true;
    $("plan-it").disabled = true;
    status("Planning…", "busy");
    try {
      const made = await api("POST", "/input_task", { description });
      $("task").value = "";
      status("");
      await loadPlans();
      await open(made.session_id, true);
    } catch (error) {
      showError(error);
    } finally {
      page.sending = false;
      $("plan-it").disabled = false;
    }
  });
  $("task").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      $("task-form").requestSubmit();
    }
  });
  $("approve-all").addEventListener("click", () =>
    act(() => api("POST", "/approve_step_or_steps", { plan_id: page.plan.id, session_id: page.session, approved: true })),
  );
  // once sent, a box is emptied unless something else was typed in it meanwhile (the next answer, already)
  const sent = (box, text) => () => box.value.trim() === text && (box.value = "");
  $("clarify").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("clarify-answer").value.trim();
    if (text) clarify(text).then(sent($("clarify-answer"), text));
  });
  $("more").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("more-info").value.trim();
    if (text) clarify(text).then(sent($("more-info"), text));
  });
  status("Connecting…", "busy");
  try {
    await loadPlans();
    status("");
  } catch (error) {
    showError(error);
    return;
  }
  window.addEventListener("popstate", () => {
    const session = new URLSearchParams(location.search).get("session");
    if (!session) location.reload(); // back to the page before any plan was shown
    else if (session !== page.session) open(session);
  });
  const session = new URLSearchParams(location.search).get("session");
  if (session) await open(session);
  else $("task").focus();
}

start();
