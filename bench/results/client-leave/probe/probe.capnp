using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .w), (name = "internet", network = (allow = ["public","private","local"])) ],
  sockets = [ (name = "http", address = "127.0.0.1:28102", http = (), service = "main") ],
);
const w :Workerd.Worker = (
  modules = [ (name = "worker.js", esModule = embed "worker.js") ],
  compatibilityDate = "2026-11-01",
  compatibilityFlags = ["enable_request_signal"],
  bindings = [ (name = "REC", text = "http://127.0.0.1:28101") ],
);
