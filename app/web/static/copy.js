// Copy buttons: copy the named field's value, say so for a moment (and to screen readers).
for (const button of document.querySelectorAll('button[data-copy]')) {
  button.addEventListener('click', async () => {
    const field = document.getElementById(button.dataset.copy);
    if (!field) return;
    field.select();
    try {
      await navigator.clipboard.writeText(field.value);
      button.textContent = 'Copied';
    } catch {
      button.textContent = 'Press Ctrl+C';
    }
    button.setAttribute('aria-live', 'polite');
    setTimeout(() => (button.textContent = 'Copy'), 2000);
  });
}
