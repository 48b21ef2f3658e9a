# A provider on loopback for tests/validate.rs: an HTTPS server with a
# certificate for api.github.com, reached through an HTTP CONNECT proxy, as
# behind a corporate proxy. Argv: cert dir, log file, JSON {token: behaviour}.
# Prints the proxy's port. Each request to the provider logs one line
# "BEHAVIOUR", each CONNECT "CONNECT host:port"; LOG.most holds the most
# requests the provider ever had in flight at once. "delayN" answers 200
# after N ms; "ratelimit" and "ratelimit403" are put off once (429, a
# rate-limit 403), then valid. A POST (Google's token endpoint) logs "POST
# path content-type grant_type iss" and answers with a minted token.
import base64, json, socket, ssl, sys, threading, time, urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import socketserver

certdir, logfile, tokens = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
lock = threading.Lock()
counts = {}
inflight = [0, 0]  # now, most

def log(line):
    with lock:
        with open(logfile, "a") as f:
            f.write(line + "\n")

class Provider(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body are two writes: with Nagle on, the body waits for the
    # client's delayed ACK (40 ms a request).
    disable_nagle_algorithm = True
    def log_message(self, *a):
        pass
    def send(self, status, body=b"", headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        auth = self.headers.get("Authorization", "")
        what = tokens.get(auth.removeprefix("Bearer "), "unknown-token")
        log(what)
        with lock:
            counts[what] = counts.get(what, 0) + 1
            n = counts[what]
            inflight[0] += 1
            inflight[1] = max(inflight[1], inflight[0])
            with open(logfile + ".most", "w") as f:
                f.write(str(inflight[1]))
        try:
            self.answer(what, n)
        finally:
            with lock:
                inflight[0] -= 1

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
        form = {k: v[0] for k, v in urllib.parse.parse_qs(body).items()}
        payload = form["assertion"].split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        log(" ".join(["POST", self.path, self.headers.get("Content-Type", ""),
                      form["grant_type"], claims["iss"]]))
        self.send(200, b'{"access_token":"ya29.minted-token","expires_in":3599,"token_type":"Bearer"}')

    def answer(self, what, n):
        if what == "valid" or (what in ("ratelimit", "ratelimit403") and n > 1):
            self.send(200, b'{"login":"octocat","id":1}', [("X-OAuth-Scopes", "repo, gist")])
        elif what == "ratelimit":
            self.send(429, b"slow down", [("Retry-After", "1")])
        elif what == "ratelimit403":
            # GitHub's primary rate limit: 403, no Retry-After.
            self.send(403, b'{"message":"API rate limit exceeded"}',
                      [("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", "1")])
        elif what == "forbidden":
            self.send(403, b'{"message":"Sorry. Your account was suspended."}',
                      [("X-RateLimit-Remaining", "4999")])
        elif what == "error":
            self.send(500, b"oops")
        elif what == "redirect":
            self.send(302, b"", [("Location", "https://evil.example/")])
        elif what == "big":
            self.send(200, b'{"login":"big"' + b" " * (10 * 1024 * 1024) + b"}")
        elif what.startswith("delay"):
            time.sleep(int(what[5:]) / 1000)
            self.send(200, b'{"login":"octocat"}')
        elif what == "drip":
            # The status and headers at once, then a byte every 250 ms.
            self.send_response(200)
            self.send_header("Content-Length", "100")
            self.end_headers()
            for _ in range(100):
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.25)
        elif what == "slow":
            time.sleep(3)
            self.send(200, b'{"login":"late"}')
        else:
            self.send(401, b'{"message":"Bad credentials"}')

provider = ThreadingHTTPServer(("127.0.0.1", 0), Provider)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(certdir + "/srv.pem", certdir + "/srv.key")
provider.socket = ctx.wrap_socket(provider.socket, server_side=True)
threading.Thread(target=provider.serve_forever, daemon=True).start()

def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    finally:
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

class Proxy(socketserver.BaseRequestHandler):
    def handle(self):
        head = b""
        while b"\r\n\r\n" not in head:
            d = self.request.recv(4096)
            if not d:
                return
            head += d
        target = head.split(b"\r\n")[0].split(b" ")[1].decode()
        log("CONNECT " + target)
        up = socket.create_connection(provider.server_address)
        for s in (up, self.request):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.request.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        t = threading.Thread(target=pipe, args=(up, self.request), daemon=True)
        t.start()
        pipe(self.request, up)
        t.join()

class ProxyServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

proxy = ProxyServer(("127.0.0.1", 0), Proxy)
print(proxy.server_address[1], flush=True)
proxy.serve_forever()
