(function () {
  "use strict";
  // Every text from the session is untrusted: it reaches the page through textContent only.
  var data = JSON.parse(document.getElementById("opmem-data").textContent);
  var turns = data.turns || [];
  var FOLD_LINES = 40, FOLD_CHARS = 3000, STEP_LINES = 400, STEP_CHARS = 40000, DIFF_STEP = 400;
  var current = -1;
  var view = document.getElementById("turn");
  var counter = document.getElementById("counter");
  var list = document.getElementById("turn-list");

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function lineCount(text) {
    if (!text) return 0;
    var count = 1;
    for (var at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) count++;
    return count;
  }

  function sizeLabel(text) {
    var lines = lineCount(text);
    var chars = text.length;
    var size = chars >= 1e6 ? (chars / 1e6).toFixed(1) + "M chars" : chars >= 1e4 ? (chars / 1e3).toFixed(1) + "k chars" : chars + " chars";
    return lines + (lines === 1 ? " line, " : " lines, ") + size;
  }

  // Where the first `lines` lines or `chars` characters from `start` end.
  function cutAt(text, start, lines, chars) {
    var end = Math.min(text.length, start + chars);
    var at = start;
    for (var i = 0; i < lines; i++) {
      at = text.indexOf("\n", at);
      if (at < 0 || at >= end) return end;
      at += 1;
    }
    return Math.min(at, end);
  }

  // Long text folded: the first lines, then "show more" adds a step and "show all" the rest.
  function folded(text, cls) {
    var pre = el("pre", cls);
    var shown = cutAt(text, 0, FOLD_LINES, FOLD_CHARS);
    if (shown >= text.length) {
      pre.textContent = text;
      return pre;
    }
    var box = el("div", "fold");
    pre.textContent = text.slice(0, shown);
    var bar = el("div", "fold-bar");
    var left = el("span", "fold-left");
    var more = el("button", "more", "show more");
    var all = el("button", "more", "show all");
    function update() {
      left.textContent = "… " + sizeLabel(text.slice(shown)) + " more";
      if (shown >= text.length) bar.remove();
    }
    more.addEventListener("click", function () {
      var next = cutAt(text, shown, STEP_LINES, STEP_CHARS);
      pre.appendChild(document.createTextNode(text.slice(shown, next)));
      shown = next;
      update();
    });
    all.addEventListener("click", function () {
      pre.appendChild(document.createTextNode(text.slice(shown)));
      shown = text.length;
      update();
    });
    update();
    bar.append(left, more, all);
    box.append(pre, bar);
    return box;
  }

  function header(node) {
    var head = el("div", "head");
    head.append(el("span", "role", node.role));
    if (node.model) head.append(el("span", "model", node.model));
    if (node.time) head.append(el("span", "time", node.time));
    return head;
  }

  function message(node) {
    var box = el("article", "msg " + node.role);
    box.append(header(node));
    if (node.thinking) {
      var think = el("details", "thinking");
      var sum = el("summary", null, "thinking (" + sizeLabel(node.thinking) + ")");
      think.append(sum);
      var filled = false;
      think.addEventListener("toggle", function () {
        if (think.open && !filled) {
          filled = true;
          think.append(folded(node.thinking, "think-text"));
        }
      });
      box.append(think, el("div", "think-hint", "∴ thinking hidden (" + sizeLabel(node.thinking) + "; t shows it)"));
    }
    if (node.text) box.append(folded(node.text, "text"));
    else if (!node.thinking && !node.calls) box.append(el("div", "empty", "(empty)"));
    return box;
  }

  function diffBlock(edit) {
    var box = el("div", "diff");
    var title = el("div", "diff-file");
    title.append(el("span", "status s-" + edit.status, edit.status), el("span", "path", edit.path), el("span", "stat", "+" + edit.add + " −" + edit.del));
    box.append(title);
    var body = el("div", "diff-body");
    box.append(body);
    var at = 0;
    function more() {
      var end = Math.min(edit.lines.length, at + DIFF_STEP);
      var frag = document.createDocumentFragment();
      for (; at < end; at++) {
        var origin = edit.lines[at][0], text = edit.lines[at][1];
        var cls = origin === "+" ? "add" : origin === "-" ? "del" : origin === "@" ? "hunk" : "ctx";
        frag.append(el("div", "dl " + cls, origin === "@" ? text : origin + " " + text));
      }
      body.append(frag);
      if (at < edit.lines.length) {
        var button = el("button", "more", "show " + Math.min(DIFF_STEP, edit.lines.length - at) + " more of " + (edit.lines.length - at) + " lines");
        button.addEventListener("click", function () { button.remove(); more(); });
        body.append(button);
      }
    }
    more();
    return box;
  }

  function tool(node) {
    var box = el("details", "tool" + (node.edits ? " edit" : ""));
    box.style.marginLeft = (1.2 * (node.depth || 0)) + "em";
    var sum = el("summary");
    sum.append(el("span", "icon", node.edits ? "✎" : "⚙"), el("span", "tname", node.name || "tool"));
    if (node.summary) sum.append(el("span", "targs", node.summary));
    sum.append(el("span", "tsize", node.size || (node.text ? sizeLabel(node.text) : "no output")));
    box.append(sum);
    var filled = false;
    box.addEventListener("toggle", function () {
      if (!box.open || filled) return;
      filled = true;
      if (node.edits) node.edits.forEach(function (edit) { box.append(diffBlock(edit)); });
      if (node.args) {
        var args = el("details", "args");
        args.append(el("summary", null, node.edits ? "arguments (JSON)" : "arguments"));
        args.append(folded(node.args, "args-text"));
        if (!node.edits) args.open = true;
        box.append(args);
      }
      box.append(el("div", "label", node.text ? "result (" + sizeLabel(node.text) + ")" : "result: (no output)"));
      if (node.text) box.append(folded(node.text, "output"));
    });
    return box;
  }

  function system(node) {
    var box = el("details", "system");
    box.append(el("summary", null, "system" + (node.name ? " · " + node.name : "") + " (" + sizeLabel(node.text) + ")"));
    var filled = false;
    box.addEventListener("toggle", function () {
      if (box.open && !filled) { filled = true; box.append(folded(node.text, "text")); }
    });
    return box;
  }

  function render(turn) {
    var frag = document.createDocumentFragment();
    var head = el("div", "turn-head");
    head.append(el("span", "turn-no", "Turn " + turn.n));
    if (turn.time) head.append(el("span", "time", turn.time));
    if (turn.commit) head.append(el("span", "commit", "commit " + turn.commit.slice(0, 10)));
    frag.append(head);
    if (turn.forks && turn.forks.length) {
      frag.append(el("div", "forks", "other branches fork in this turn: " + turn.forks.join(", ")));
    }
    turn.nodes.forEach(function (node) {
      frag.append(node.kind === "tool" ? tool(node) : node.kind === "system" ? system(node) : message(node));
    });
    view.replaceChildren(frag);
  }

  function show(index) {
    if (!turns.length) {
      counter.textContent = "no turns";
      view.replaceChildren(el("p", "empty", "This session has no messages."));
      return;
    }
    index = Math.max(0, Math.min(turns.length - 1, index));
    if (index === current) return;
    current = index;
    var turn = turns[index];
    render(turn);
    counter.textContent = "turn " + turn.n + " / " + data.total_turns;
    var items = list.children;
    for (var i = 0; i < items.length; i++) {
      if (i === index) items[i].setAttribute("aria-current", "true");
      else items[i].removeAttribute("aria-current");
    }
    if (items[index] && items[index].scrollIntoView) items[index].scrollIntoView({ block: "nearest" });
    window.scrollTo(0, 0);
    try { history.replaceState(null, "", "#turn-" + turn.n); } catch (e) { /* a sandboxed frame */ }
  }

  function openAll() {
    var tools = view.querySelectorAll("details.tool");
    var open = Array.prototype.some.call(tools, function (d) { return !d.open; });
    tools.forEach(function (d) { d.open = open; });
  }

  function toggleThinking() {
    var on = !document.body.classList.contains("show-thinking");
    document.body.classList.toggle("show-thinking", on);
    view.querySelectorAll("details.thinking").forEach(function (d) { d.open = on; });
  }

  turns.forEach(function (turn, index) {
    var item = el("li");
    var button = el("button", "turn-link");
    button.append(el("span", "n", turn.n), el("span", "p", turn.prompt || "(no prompt)"));
    button.addEventListener("click", function () { show(index); });
    item.append(button);
    list.append(item);
  });

  var branches = document.getElementById("branch-list");
  (data.branches || []).forEach(function (b) {
    var item = el("li", b.exported ? "exported" : "");
    item.append(el("span", "bname", b.name), el("span", "bturns", b.turns + (b.turns === 1 ? " turn" : " turns")));
    if (b.current) item.append(el("span", "tag", "current"));
    if (b.exported) item.append(el("span", "tag", "this export"));
    branches.append(item);
  });

  document.getElementById("prev").addEventListener("click", function () { show(current - 1); });
  document.getElementById("next").addEventListener("click", function () { show(current + 1); });
  document.getElementById("thinking-toggle").addEventListener("click", toggleThinking);
  document.getElementById("tools-toggle").addEventListener("click", openAll);
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var tag = event.target && event.target.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
    var key = event.key;
    if (key === "ArrowRight" || key === "j" || key === "l") show(current + 1);
    else if (key === "ArrowLeft" || key === "k" || key === "h") show(current - 1);
    else if (key === "Home" || key === "g") show(0);
    else if (key === "End" || key === "G") show(turns.length - 1);
    else if (key === "t") toggleThinking();
    else if (key === "o") openAll();
    else return;
    event.preventDefault();
  });

  var start = 0;
  var wanted = /^#turn-(\d+)$/.exec(location.hash || "");
  if (wanted) {
    var n = parseInt(wanted[1], 10);
    turns.forEach(function (turn, index) { if (turn.n === n) start = index; });
  }
  show(start);
})();
