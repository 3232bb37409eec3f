// Library uploads: send with a byte-level progress bar (XHR), then hand the per-file
// status over to htmx. Loaded as a static file: the Content-Security-Policy forbids inline script.
(function () {
  "use strict";
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form.id !== "upload-form" || !window.FormData) { return; }
    event.preventDefault();
    var bar = document.getElementById("upload-progress");
    var label = document.getElementById("upload-percent");
    var xhr = new XMLHttpRequest();
    xhr.open("POST", form.action);
    xhr.setRequestHeader("X-Requested-With", "XMLHttpRequest");
    bar.hidden = false;
    xhr.upload.addEventListener("progress", function (e) {
      if (e.lengthComputable) {
        bar.value = Math.round(100 * e.loaded / e.total);
        label.textContent = bar.value + "% sent";
      }
    });
    xhr.addEventListener("load", function () {
      var target;
      if (xhr.status === 200) {
        label.textContent = "Sent. Ingesting…";
        target = document.getElementById("upload-status");
        target.innerHTML = xhr.responseText;
        form.reset();
      } else {
        target = document.getElementById("upload-form-wrapper");
        target.outerHTML = xhr.responseText;
        target = document.getElementById("upload-form-wrapper");
      }
      if (window.htmx && target) { window.htmx.process(target); }
    });
    xhr.addEventListener("error", function () { label.textContent = "Upload failed: network error."; });
    xhr.send(new FormData(form));
  });
})();
