"""A real OpenID Connect provider for the single sign-on tests, built on authlib's server
classes: its AuthorizationServer with the authorization code grant, the OpenIDCode and
PKCE (S256) extensions, and authlib.jose for the JWKS and the ID tokens' signatures.

It serves discovery, authorize, token and jwks on 127.0.0.1:0. A test drives it:
  provider.user = ("alice", ["ml-platform"])  # who the authorize endpoint approves (sub "sub-alice")
  provider.user = ("alice", ["viewers"], "sub-mallory")  # another person who calls herself alice
  provider.claims = {"aud": [...], "azp": "x"}  # claims the next ID tokens carry, over the usual ones
  provider.corrupt_signature = True           # the next ID tokens' signature is broken
  provider.id_token_lifetime = -3600          # the next ID tokens expired an hour ago
  provider.rotate_keys()                      # a new signing key; the old one is dropped
  provider.jwks_delay = 30                    # the key endpoint answers after 30 s
"""

import json
import os
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlparse

# The provider runs on plain http://127.0.0.1; authlib refuses that unless told.
os.environ.setdefault("AUTHLIB_INSECURE_TRANSPORT", "1")

from authlib.jose import JsonWebKey  # noqa: E402
from authlib.oauth2 import rfc6749  # noqa: E402
from authlib.oauth2.rfc6749 import grants  # noqa: E402
from authlib.oauth2.rfc6750 import BearerTokenGenerator  # noqa: E402
from authlib.oauth2.rfc7636 import CodeChallenge  # noqa: E402
from authlib.oidc.core import UserInfo  # noqa: E402
from authlib.oidc.core.grants import OpenIDCode  # noqa: E402


class Client(rfc6749.ClientMixin):
    def __init__(self, client_id, client_secret, redirect_uri):
        self.client_id = client_id
        self.client_secret = client_secret
        self.redirect_uri = redirect_uri

    def get_client_id(self):
        return self.client_id

    def get_default_redirect_uri(self):
        return self.redirect_uri

    def get_allowed_scope(self, scope):
        return scope

    def check_redirect_uri(self, redirect_uri):
        return redirect_uri == self.redirect_uri

    def check_client_secret(self, client_secret):
        return secrets.compare_digest(client_secret, self.client_secret)

    def check_endpoint_auth_method(self, method, endpoint):
        return method in ("client_secret_post", "client_secret_basic")

    def check_response_type(self, response_type):
        return response_type == "code"

    def check_grant_type(self, grant_type):
        return grant_type == "authorization_code"


class AuthorizationCode(dict):
    """What authlib's grants read back from a stored code."""

    def get_redirect_uri(self):
        return self["redirect_uri"]

    def get_scope(self):
        return self["scope"]

    def get_nonce(self):
        return self.get("nonce")

    def get_auth_time(self):
        return self["auth_time"]

    @property
    def code_challenge(self):
        return self.get("code_challenge")

    @property
    def code_challenge_method(self):
        return self.get("code_challenge_method")


class Provider:
    def __init__(self, client_id, client_secret, redirect_uri):
        self.user = ("nobody", [])
        self.claims = {}
        self.jwks_delay = 0
        self.stopping = threading.Event()
        self.corrupt_signature = False
        self.id_token_lifetime = 3600
        self.key = self._new_key()
        self.codes = {}
        self.token_requests = 0
        self.jwks_requests = 0
        self.client = Client(client_id, client_secret, redirect_uri)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.issuer = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        self.server = self._authorization_server()

    @staticmethod
    def _new_key():
        return JsonWebKey.generate_key("RSA", 2048, is_private=True, options={"kid": secrets.token_hex(8)})

    def rotate_keys(self):
        self.key = self._new_key()

    def start(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self):
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def _authorization_server(self):
        provider = self

        class Server(rfc6749.AuthorizationServer):
            def query_client(self, client_id):
                return provider.client if client_id == provider.client.client_id else None

            def save_token(self, token, request):
                pass

            def send_signal(self, name, *args, **kwargs):
                pass

            def create_oauth2_request(self, request):
                method, uri, body, headers = request
                return rfc6749.OAuth2Request(method, uri, body, headers)

            def create_json_request(self, request):
                raise NotImplementedError()

            def handle_response(self, status, body, headers):
                return status, body, headers

        class CodeGrant(grants.AuthorizationCodeGrant):
            TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]

            def save_authorization_code(self, code, request):
                provider.codes[code] = AuthorizationCode(
                    redirect_uri=request.redirect_uri,
                    scope=request.scope,
                    nonce=request.data.get("nonce"),
                    auth_time=int(time.time()),
                    code_challenge=request.data.get("code_challenge"),
                    code_challenge_method=request.data.get("code_challenge_method"),
                    user=request.user,
                )

            def query_authorization_code(self, code, client):
                return provider.codes.get(code)

            def delete_authorization_code(self, authorization_code):
                provider.codes = {k: v for k, v in provider.codes.items() if v is not authorization_code}

            def authenticate_user(self, authorization_code):
                return authorization_code["user"]

        class IdTokens(OpenIDCode):
            def exists_nonce(self, nonce, request):
                return any(c.get("nonce") == nonce for c in provider.codes.values())

            def get_jwt_config(self, grant):
                return {"key": provider.key, "alg": "RS256", "iss": provider.issuer, "exp": provider.id_token_lifetime}

            def generate_user_info(self, user, scope):
                name, groups = user[0], user[1]
                subject = user[2] if len(user) > 2 else "sub-" + name
                # Merged over the token's own claims by authlib (aud, azp, ...).
                return UserInfo(dict(sub=subject, preferred_username=name, groups=groups, **provider.claims))

        server = Server()
        server.register_token_generator(
            "default", BearerTokenGenerator(lambda client, grant_type, user, scope: secrets.token_urlsafe(32)))
        server.register_grant(CodeGrant, [CodeChallenge(required=True), IdTokens(require_nonce=True)])
        return server

    def _handler(self):
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status, body, headers=()):
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                sent = {k.lower() for k, _ in headers}
                for k, v in headers:
                    self.send_header(k, v)
                if "content-type" not in sent:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                path = urlparse(self.path).path
                if path == "/.well-known/openid-configuration":
                    return self._send(200, provider.discovery())
                if path == "/jwks":
                    provider.jwks_requests += 1
                    if provider.jwks_delay:
                        provider.stopping.wait(provider.jwks_delay)  # cut short when the provider stops
                    return self._send(200, {"keys": [provider.key.as_dict(is_private=False)]})
                if path == "/authorize":
                    uri = provider.issuer + self.path
                    status, body, headers = provider.server.create_authorization_response(
                        ("GET", uri, None, dict(self.headers)), grant_user=provider.user)
                    return self._send(status, body if body else b"", headers)
                self._send(404, {"error": "not_found"})

            def do_POST(self):
                if urlparse(self.path).path != "/token":
                    return self._send(404, {"error": "not_found"})
                length = int(self.headers.get("Content-Length", "0"))
                form = dict(parse_qsl(self.rfile.read(length).decode()))
                provider.token_requests += 1
                status, body, headers = provider.server.create_token_response(
                    ("POST", provider.issuer + self.path, form, dict(self.headers)))
                if status == 200 and provider.corrupt_signature and "id_token" in body:
                    head, claims, signature = body["id_token"].split(".")
                    flipped = "A" if signature[10] != "A" else "B"
                    body["id_token"] = ".".join([head, claims, signature[:10] + flipped + signature[11:]])
                self._send(status, body, headers)

        return Handler

    def discovery(self):
        return {
            "issuer": self.issuer,
            "authorization_endpoint": self.issuer + "/authorize",
            "token_endpoint": self.issuer + "/token",
            "jwks_uri": self.issuer + "/jwks",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
        }
