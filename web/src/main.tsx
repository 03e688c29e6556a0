import { render } from 'preact';

render(
  <main>
    <h1>Shifts</h1>
  </main>,
  document.getElementById('app')!,
);
