#!/usr/bin/env node
// A rollcert-protocol/1 server in plain Node.js, no dependencies: the example to
// port when certifying an implementation written in another language.
//
//   rollcert certify 'subprocess:node examples/protocol/buffer_server.js'
//
// The buffer is deliberately naive (every state is kept whole, so a rollback is
// a pop): correct by construction, and short enough to read in one sitting.
// Capabilities: core (read, splice, rollback), depth, revisions, checkpoints.
// The wire format is documented in docs/protocol.md.
"use strict";

const readline = require("readline");

const PROTOCOL = "rollcert-protocol/1";

class RequestError extends Error {
  // `kind` is an error kind of docs/protocol.md: a documented refusal
  // (ValueError, UnreachableRollbackError, ...) or ProtocolError for a bad request.
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

const buffers = new Map(); // buffer id -> {states: [{data, serial}], revision}
let nextBufferNumber = 1;
let nextSerial = 1;

function field(request, name, type) {
  const value = request[name];
  const ok =
    (type === "int" && Number.isInteger(value)) ||
    (type === "string" && typeof value === "string") ||
    (type === "int-or-null" && (value === null || Number.isInteger(value))) ||
    (type === "bytes" && typeof value === "string" && /^[A-Za-z0-9+/]*={0,2}$/.test(value) && value.length % 4 === 0);
  if (!(name in request) || !ok) {
    throw new RequestError("ProtocolError", `request ${request.id} (${request.op}): field '${name}' must be ${type}`);
  }
  return type === "bytes" ? Buffer.from(value, "base64") : value;
}

function hosted(request) {
  const buffer = buffers.get(field(request, "buffer", "string"));
  if (buffer === undefined) throw new RequestError("ProtocolError", `no open buffer ${JSON.stringify(request.buffer)}`);
  return buffer;
}

const current = (buffer) => buffer.states[buffer.states.length - 1];
const depth = (buffer) => buffer.states.length - 1;

function rollback(buffer, steps) {
  if (steps < 0) throw new RequestError("ValueError", `steps must be >= 0, got ${steps}`);
  if (steps > depth(buffer)) {
    throw new RequestError("UnreachableRollbackError", `rollback(${steps}) goes past the horizon (depth ${depth(buffer)})`);
  }
  buffer.states.length -= steps;
  buffer.revision += steps; // a rollback is a mutation too: one revision per undone record
}

const operations = {
  hello(request) {
    if (field(request, "protocol", "string") !== PROTOCOL) {
      throw new RequestError("ProtocolError", `this server speaks ${PROTOCOL}`);
    }
    return { protocol: PROTOCOL, name: "naive-js-buffer", version: "1.0.0",
             capabilities: ["core", "depth", "revisions", "checkpoints"] };
  },
  new(request) {
    const initial = field(request, "initial", "bytes");
    if (field(request, "capacity", "int-or-null") !== null) {
      throw new RequestError("ValueError", "this server has no bounded journal (capability bounded)");
    }
    field(request, "policy", "string");
    const id = `b${nextBufferNumber++}`;
    buffers.set(id, { states: [{ data: initial, serial: nextSerial++ }], revision: 0 });
    return id;
  },
  close(request) {
    hosted(request);
    buffers.delete(request.buffer);
    return null;
  },
  read: (request) => current(hosted(request)).data.toString("base64"),
  depth: (request) => depth(hosted(request)),
  revision: (request) => hosted(request).revision,
  splice(request) {
    const buffer = hosted(request);
    const offset = field(request, "offset", "int");
    const deleteLength = field(request, "delete_length", "int");
    const insert = field(request, "insert", "bytes");
    const data = current(buffer).data;
    if (offset < 0 || offset > data.length) {
      throw new RequestError("ValueError", `offset ${offset} outside the buffer [0, ${data.length}]`);
    }
    if (deleteLength < 0 || deleteLength > data.length - offset) {
      throw new RequestError("ValueError", `delete_length ${deleteLength} runs past the end`);
    }
    const next = Buffer.concat([data.subarray(0, offset), insert, data.subarray(offset + deleteLength)]);
    buffer.states.push({ data: next, serial: nextSerial++ });
    buffer.revision += 1;
    return null;
  },
  rollback(request) {
    rollback(hosted(request), field(request, "steps", "int"));
    return null;
  },
  checkpoint(request) {
    // The token names the state's serial, never its depth: a state rolled away
    // and replaced by another at the same depth must not be reachable (no ABA).
    return `${request.buffer}:${current(hosted(request)).serial}`;
  },
  rollback_to(request) {
    const buffer = hosted(request);
    const [owner, serialText] = field(request, "token", "string").split(":");
    const index = buffer.states.findIndex((state) => String(state.serial) === serialText);
    if (owner !== request.buffer || index < 0) {
      throw new RequestError("UnreachableRollbackError", "the checkpoint is dead or belongs to another buffer");
    }
    rollback(buffer, depth(buffer) - index);
    return null;
  },
};

function answer(line) {
  let request;
  try {
    request = JSON.parse(line);
  } catch (error) {
    return { id: null, ok: false, error: { kind: "ProtocolError", message: `not JSON: ${error.message}` } };
  }
  const id = request !== null && Number.isInteger(request.id) ? request.id : null;
  try {
    if (id === null) throw new RequestError("ProtocolError", "request 'id' must be an integer");
    const operation = Object.hasOwn(operations, request.op) ? operations[request.op] : undefined;
    if (operation === undefined) throw new RequestError("ProtocolError", `unknown op ${JSON.stringify(request.op)}`);
    return { id, ok: true, result: operation(request) };
  } catch (error) {
    const kind = error instanceof RequestError ? error.kind : error.name; // a bug: an undocumented kind
    return { id, ok: false, error: { kind, message: error.message } };
  }
}

const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
input.on("line", (line) => process.stdout.write(JSON.stringify(answer(line)) + "\n"));
input.on("close", () => process.exit(0));
