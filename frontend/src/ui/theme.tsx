import { useCallback, useEffect, useState } from 'react';
import Theme, { GLOBAL_DARK_CLASS_NAME } from '@jetbrains/ring-ui-built/components/global/theme';

export type ThemeChoice = Theme.LIGHT | Theme.DARK;
const KEY = 'conductor.theme';

/** Light or dark: the saved choice, else the system preference. */
export function initialTheme(): ThemeChoice {
  const saved = globalThis.localStorage?.getItem(KEY);
  if (saved === Theme.DARK || saved === Theme.LIGHT) return saved;
  return globalThis.matchMedia?.('(prefers-color-scheme: dark)').matches ? Theme.DARK : Theme.LIGHT;
}

/** The theme state; the choice is kept in localStorage and mirrored on <html> for our own CSS. */
export function useThemeChoice(): [ThemeChoice, () => void] {
  const [theme, setTheme] = useState<ThemeChoice>(initialTheme);
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
    document.documentElement.style.colorScheme = theme;
    // On <html> too, so Ring's dark variables also reach dialogs and popups portalled to <body>.
    document.documentElement.classList.toggle(GLOBAL_DARK_CLASS_NAME, theme === Theme.DARK);
  }, [theme]);
  const toggle = useCallback(() => {
    setTheme((t) => {
      const next = t === Theme.DARK ? Theme.LIGHT : Theme.DARK;
      globalThis.localStorage?.setItem(KEY, next);
      return next;
    });
  }, []);
  return [theme, toggle];
}

export { Theme };
