// Every page: the collapsing main menu at phone width, and closing the administration menu on a
// click elsewhere. Loaded in <head> so the "js" class is set before the first paint; without
// JavaScript the menu stays expanded (the CSS hides it only under .js).
document.documentElement.classList.add("js");
document.addEventListener("DOMContentLoaded", () => {
  const bar = document.getElementById("topbar");
  const toggle = document.getElementById("menu-toggle");
  if (bar && toggle) {
    toggle.addEventListener("click", () => {
      const open = bar.classList.toggle("menu-open");
      toggle.setAttribute("aria-expanded", open ? "true" : "false");
    });
  }
  document.addEventListener("click", (event) => {
    document.querySelectorAll("details.navgroup[open]").forEach((d) => {
      if (!d.contains(event.target)) d.removeAttribute("open");
    });
  });
});
