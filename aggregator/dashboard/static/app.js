// mcpx dashboard: refreshes the live part of a page, and sends the
// try-it form without leaving the page. No library, nothing from
// elsewhere; the server renders every piece of HTML this puts in.
"use strict";

(function () {
  const every = 2000; // ms between refreshes of a live part

  // Refresh the element marked data-live from its URL while the page is
  // visible, keeping what the user is doing: no refresh while focus is
  // in it.
  function live(el) {
    const url = el.getAttribute("data-live");
    let busy = false;
    setInterval(async function () {
      if (busy || document.hidden || el.contains(document.activeElement)) {
        return;
      }
      busy = true;
      try {
        const res = await fetch(url, { credentials: "same-origin", headers: { "Accept": "text/html" } });
        if (res.redirected) {
          location.assign(res.url); // the login ended: to the login page
          return;
        }
        if (res.ok) {
          const html = await res.text();
          if (html !== el.innerHTML) {
            el.innerHTML = html;
          }
        }
      } catch (e) {
        // The server is restarting or gone: try again at the next tick.
      } finally {
        busy = false;
      }
    }, every);
  }

  // Send a form marked data-result with fetch, and put the server's
  // rendering of the result in the element it names.
  function inline(form) {
    const target = document.getElementById(form.getAttribute("data-result"));
    form.addEventListener("submit", async function (ev) {
      ev.preventDefault();
      const button = form.querySelector("button[type=submit]");
      button.disabled = true;
      target.textContent = "Calling…";
      try {
        const url = new URL(form.action);
        url.searchParams.set("part", "result");
        const res = await fetch(url, {
          method: "POST",
          credentials: "same-origin",
          headers: { "X-CSRF-Token": document.body.getAttribute("data-csrf") },
          body: new URLSearchParams(new FormData(form)),
        });
        const text = await res.text();
        if (res.ok) {
          target.innerHTML = text;
        } else {
          target.textContent = res.status + ": " + text;
        }
      } catch (e) {
        target.textContent = "The call could not be sent: " + e;
      } finally {
        button.disabled = false;
      }
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-live]").forEach(live);
    document.querySelectorAll("form[data-result]").forEach(inline);
  });
})();
