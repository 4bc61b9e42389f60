// worker.js — the bench floor's whole extension: connect to the floor host and answer it.
// `echo` comes straight back; `bulk` is answered with `count` messages of `chunkBytes` ASCII
// characters each (the size of tabwarden's hop-3 chunks). It must never touch a page or a tab:
// the floor is native messaging alone.

const HOST = "com.tabwarden.bench_floor";

const port = chrome.runtime.connectNative(HOST);
port.onMessage.addListener((message) => {
  if (message.op === "echo") {
    port.postMessage(message);
  } else if (message.op === "bulk") {
    const data = "x".repeat(message.chunkBytes);
    for (let seq = 0; seq < message.count; seq += 1) port.postMessage({ op: "chunk", seq, data });
  }
});
