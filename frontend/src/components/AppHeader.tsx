import Header, { Tray } from '@jetbrains/ring-ui-built/components/header/header';
import Button from '@jetbrains/ring-ui-built/components/button/button';
import Toggle from '@jetbrains/ring-ui-built/components/toggle/toggle';
import { Theme, type ThemeChoice } from '../ui/theme';

interface AppHeaderProps {
  version?: string;
  theme: ThemeChoice;
  onToggleTheme: () => void;
  hasApiKey: boolean;
  onForgetKey: () => void;
  onNewTask: () => void;
}

/** Ring UI header: product name, version, theme switch, API key and the New task action. */
export function AppHeader({ version, theme, onToggleTheme, hasApiKey, onForgetKey, onNewTask }: AppHeaderProps) {
  return (
    <Header className="app-header" spaced={false}>
      <a className="brand" href="./" aria-label="Conductor home">
        <img src="./favicon.svg" alt="" width={22} height={22} />
        <span className="brand-name">Conductor</span>
      </a>
      <span className="version">{version ? (/^\d/.test(version) ? `v${version}` : version) : ''}</span>
      <Tray className="header-tray">
        <Toggle checked={theme === Theme.DARK} onChange={onToggleTheme} className="theme-toggle">
          Dark theme
        </Toggle>
        {hasApiKey && (
          <Button inline onClick={onForgetKey}>
            Forget API key
          </Button>
        )}
        <Button primary onClick={onNewTask}>
          New task
        </Button>
      </Tray>
    </Header>
  );
}
