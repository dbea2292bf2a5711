// Shared helpers for the NDNts clients of Trajan's interoperability tests.
//
// The @ndn/* packages live in .interop/node/node_modules (installed by
// scripts/interop-setup.sh from tests/interop/ndnts/package.json), which Node's
// ESM resolver would not find from this directory, so they are resolved through
// createRequire() rooted there. INTEROP_NODE_DIR overrides that directory.
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

// NDNts 0.0.20250307 declares engines node ^22.11 and uses Promise.withResolvers
// (Node 22). On Node 20 this is the only missing piece; polyfill it before loading.
if (typeof Promise.withResolvers !== "function") {
  Promise.withResolvers = function withResolvers() {
    let resolve;
    let reject;
    const promise = new this((res, rej) => { resolve = res; reject = rej; });
    return { promise, resolve, reject };
  };
}

const here = path.dirname(fileURLToPath(import.meta.url));
export const NODE_DIR = process.env.INTEROP_NODE_DIR ?? path.resolve(here, "../../.interop/node");
const require = createRequire(path.join(NODE_DIR, "package.json"));

/** Import an installed package by name (e.g. "@ndn/packet"). */
export function load(pkg) {
  return import(pathToFileURL(require.resolve(pkg)).href);
}

/** The forwarder's address: NDN_CLIENT_TRANSPORT, else NFD's default Unix socket. */
export function transportUri() {
  return process.env.NDN_CLIENT_TRANSPORT || "unix:///run/nfd/nfd.sock";
}

/**
 * Connect a new FwFace to the forwarder named by NDN_CLIENT_TRANSPORT.
 * Supports unix://PATH, tcp://HOST:PORT and udp://HOST:PORT.
 */
export async function connectUplink(opts = {}) {
  const { UnixTransport, TcpTransport, UdpTransport } = await load("@ndn/node-transport");
  const uri = new URL(transportUri());
  const port = uri.port ? Number(uri.port) : 6363;
  const host = uri.hostname.replace(/^\[|\]$/g, "");
  switch (uri.protocol) {
    case "unix:":
      return UnixTransport.createFace(opts, decodeURIComponent(uri.pathname));
    case "tcp:": case "tcp4:": case "tcp6:":
      return TcpTransport.createFace(opts, { host, port });
    case "udp:": case "udp4:": case "udp6:":
      return UdpTransport.createFace(opts, { host, port });
    default:
      throw new Error(`unsupported NDN_CLIENT_TRANSPORT ${uri.href}`);
  }
}

export function say(line) {
  process.stdout.write(`${line}\n`);
}

export function die(msg, code = 1) {
  process.stderr.write(`ERROR ${msg}\n`);
  process.exit(code);
}

/** Minimal --flag / --key value parser: returns { positional: [], flags: {} }. */
export function parseArgv(argv, valued = []) {
  const positional = [];
  const flags = {};
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      if (eq > 0) {
        flags[a.slice(2, eq)] = a.slice(eq + 1);
      } else if (valued.includes(a.slice(2))) {
        if (i + 1 >= argv.length) { die(`${a} needs a value`, 64); }
        flags[a.slice(2)] = argv[++i];
      } else {
        flags[a.slice(2)] = true;
      }
    } else {
      positional.push(a);
    }
  }
  return { positional, flags };
}
