// The dashboard's only script: one EventSource per page (the URL is the
// body's data-stream attribute). Each "region" event carries the id of a
// live region and its new HTML, rendered and escaped by the server; the
// browser reconnects by itself. No polling loop. A swap keeps the
// keyboard focus on the same control when the new HTML still has it.
(function () {
  "use strict";
  var url = document.body.getAttribute("data-stream");
  var status = document.getElementById("live-status");
  function say(text) { if (status) { status.textContent = text; } }
  if (!url || !window.EventSource) { say("live updates unavailable"); return; }

  // focusKey names the focused control inside el so it can be found again
  // in the region's new HTML ("" when the focus is elsewhere).
  function focusKey(el) {
    var a = document.activeElement;
    if (!a || a === el || !el.contains(a)) { return ""; }
    if (a.id) { return "#" + CSS.escape(a.id); }
    var form = a.closest("form[action]");
    if (form) {
      var key = 'form[action="' + CSS.escape(form.getAttribute("action")) + '"] ' + a.tagName.toLowerCase();
      if (a.name) { key += '[name="' + CSS.escape(a.name) + '"]'; }
      return key;
    }
    if (a.tagName === "A" && a.getAttribute("href")) {
      return 'a[href="' + CSS.escape(a.getAttribute("href")) + '"]';
    }
    return "";
  }

  var es = new EventSource(url);
  es.addEventListener("open", function () { say("live"); });
  es.addEventListener("error", function () {
    say(es.readyState === EventSource.CLOSED ? "disconnected: reload the page" : "reconnecting…");
  });
  es.addEventListener("expired", function () {
    es.close();
    say("session ended: sign in again");
  });
  es.addEventListener("region", function (e) {
    var msg;
    try { msg = JSON.parse(e.data); } catch (err) { return; }
    var el = document.getElementById(msg.id);
    if (!el) { return; }
    var key = focusKey(el);
    el.innerHTML = msg.html;
    if (key) {
      var again = el.querySelector(key);
      if (again) { again.focus(); }
    }
  });
})();
