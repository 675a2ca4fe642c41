// The dashboard's only script: one EventSource per page (the URL is the
// body's data-stream attribute). Each "region" event carries the id of a
// live region and its new HTML, rendered and escaped by the server; the
// browser reconnects by itself. No polling loop.
(function () {
  "use strict";
  var url = document.body.getAttribute("data-stream");
  var status = document.getElementById("live-status");
  function say(text) { if (status) { status.textContent = text; } }
  if (!url || !window.EventSource) { say("live updates unavailable"); return; }
  var es = new EventSource(url);
  es.addEventListener("open", function () { say("live"); });
  es.addEventListener("error", function () {
    say(es.readyState === EventSource.CLOSED ? "disconnected: reload the page" : "reconnecting…");
  });
  es.addEventListener("expired", function () {
    es.close();
    say("session expired: sign in again");
  });
  es.addEventListener("region", function (e) {
    var msg;
    try { msg = JSON.parse(e.data); } catch (err) { return; }
    var el = document.getElementById(msg.id);
    if (el) { el.innerHTML = msg.html; }
  });
})();
