// The identity provider, the session service and an app behind one origin:
//   npm run routes -- serve --script examples/routes/one-origin/app.js \
//     --issuer http://127.0.0.1:8080/idp --policy-file examples/routes/one-origin/policy.yaml
// then open http://127.0.0.1:8080/ and sign in (any login; `admin` may use the session API).
const httpmod = require("httpmod");
const app = httpmod.app();
const user = httpmod.user().required();

// The identity provider, in this process; its issuer is http://127.0.0.1:8080/idp.
app.mount("/idp", require("idp").handler());

// The session service's API under /sessions/api/v1, for signed-in users the policy allows.
app.all("/sessions/*").auth(user).allow("sessions:use").audit("sessions.api").mount(require("sessions").handler(), { stripPrefix: true });

app.get("/").public().handle(() => ({
  title: "One origin",
  pages: [
    { page: "/me", what: "who you are (signs you in first)" },
    { page: "/sessions/api/v1/health", what: "the session service, behind sign-in (admin)" },
    { page: "/idp/.well-known/openid-configuration", what: "the identity provider's discovery document" },
    { page: "/auth/logout", what: "sign out, here and at the identity provider" },
  ],
}));

app.get("/me").auth(user).allow("profile:read").handle((ctx) => ({
  title: "Signed in",
  you: { id: ctx.actor.id, name: ctx.actor.claims.name, email: ctx.actor.claims.email, roles: ctx.actor.claims.roles || [] },
}));
