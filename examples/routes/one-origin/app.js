// The identity provider and an app behind one origin:
//   npm run routes -- serve --script examples/routes/one-origin/app.js --issuer http://127.0.0.1:8080/idp
// then open http://127.0.0.1:8080/ and sign in (any login; try `admin`).
const httpmod = require("httpmod");
const app = httpmod.app();
const user = httpmod.user().required();

// The identity provider, in this process; its issuer is http://127.0.0.1:8080/idp.
app.mount("/idp", require("idp").handler());

app.get("/").public().handle(() => ({
  title: "One origin",
  pages: [
    { page: "/me", what: "who you are (signs you in first)" },
    { page: "/idp/.well-known/openid-configuration", what: "the identity provider's discovery document" },
    { page: "/auth/logout", what: "sign out, here and at the identity provider" },
  ],
}));

// Any signed-in user may read their own profile (the scope authorizer grants "openid" from the token's scope).
app.get("/me").auth(user).allow("openid").handle((ctx) => ({
  title: "Signed in",
  you: { id: ctx.actor.id, name: ctx.actor.claims.name, email: ctx.actor.claims.email, roles: ctx.actor.claims.roles || [] },
}));
