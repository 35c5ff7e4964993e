// The API page: every route of /openapi.json with its methods, summary, description, parameters and request body.
// Read from the server itself and drawn as text nodes: nothing is fetched from elsewhere (the page works offline).

const METHODS = ["get", "post", "put", "patch", "delete"];

/** An element with a class and children (strings become text nodes). */
function el(tag, className, ...children) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  node.append(...children.filter((child) => child !== null && child !== undefined));
  return node;
}

/** A schema's name (its $ref's last part), or its type ("array of RunCreate"). */
function schemaName(schema) {
  if (!schema) return "";
  if (schema.$ref) return schema.$ref.split("/").pop();
  if (schema.type === "array") return `array of ${schemaName(schema.items) || "any"}`;
  const choices = schema.anyOf || schema.oneOf;
  if (choices) return choices.map(schemaName).join(" | ");
  return schema.type || "any";
}

function parameter(p) {
  const required = p.required ? " (required)" : "";
  return el(
    "li",
    "param",
    el("code", null, p.name),
    ` in ${p.in}, ${schemaName(p.schema)}${required}`,
    p.description ? ` — ${p.description}` : null,
  );
}

function route(path, method, operation) {
  const section = el("section", "route");
  section.append(el("h3", null, el("span", `method ${method}`, method.toUpperCase()), " ", el("code", null, path)));
  if (operation.summary) section.append(el("p", "summary", operation.summary));
  if (operation.description) section.append(el("p", "description", operation.description));
  const params = operation.parameters || [];
  if (params.length) section.append(el("ul", "params", ...params.map(parameter)));
  const body = operation.requestBody?.content?.["application/json"]?.schema;
  if (body) section.append(el("p", "body", "JSON body: ", el("code", null, schemaName(body))));
  const codes = Object.keys(operation.responses || {});
  if (codes.length) section.append(el("p", "responses", `Answers ${codes.join(", ")}`));
  return section;
}

async function main() {
  const status = document.getElementById("status");
  try {
    const response = await fetch("/openapi.json");
    if (!response.ok) throw new Error(`/openapi.json answered ${response.status}`);
    const schema = await response.json();
    const version = schema.info?.version;
    document.getElementById("title").textContent = version ? `Podium ${version} API` : "Podium API";
    const routes = document.getElementById("routes");
    for (const [path, item] of Object.entries(schema.paths || {})) {
      for (const method of METHODS) {
        if (item[method]) routes.append(route(path, method, item[method]));
      }
    }
    status.hidden = true;
  } catch (error) {
    status.className = "status error";
    status.textContent = `Could not read the API schema: ${error.message}`;
  }
}

main();
