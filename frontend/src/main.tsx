import '@jetbrains/ring-ui-built/components/style.css';
import '@fontsource/jetbrains-mono/400.css';
import './styles.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { adoptKeyFromFragment, api } from './api/client';

adoptKeyFromFragment(api);

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
