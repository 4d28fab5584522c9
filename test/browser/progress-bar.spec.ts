/**
 * The load progress bar, one markup and one sheet (src/element/clef-decide/progress-bar.ts),
 * looks as each host drew its own: the computed styles below are the element's and the
 * playground's own CSS values as they were written before the two were shared.
 */
import { expect, test, type Locator } from '@playwright/test';

const PAGE = '/test/browser/pages/progress-bar.html';

/** The computed styles of a bar's parts that make its look. */
async function look(bar: Locator) {
  return bar.evaluate((el) => {
    const track = el.querySelector('.progress-track')!;
    const fill = el.querySelector('.progress-fill')!;
    const s = getComputedStyle(el);
    const t = getComputedStyle(track);
    const f = getComputedStyle(fill);
    return {
      display: s.display,
      gap: s.rowGap,
      fontSize: s.fontSize,
      color: s.color,
      marginTop: s.marginTop,
      trackHeight: `${Math.round(parseFloat(t.height) * 10) / 10}px`,
      trackRadius: t.borderTopLeftRadius,
      trackBackground: t.backgroundColor,
      trackOverflow: t.overflow,
      fillBackground: f.backgroundColor,
      fillWidthShare: Math.round(
        (100 * fill.getBoundingClientRect().width) / track.getBoundingClientRect().width,
      ),
      fillTransition:
        f.transitionDuration === '0s'
          ? 'none'
          : `${f.transitionProperty} ${f.transitionDuration} ${f.transitionTimingFunction}`,
      fillAnimation:
        f.animationName === 'none'
          ? 'none'
          : `${f.animationDuration} ${f.animationIterationCount} ${f.animationDirection}`,
    };
  });
}

test('the element and the playground draw the shared bar as each did on its own', async ({
  page,
}) => {
  await page.emulateMedia({ colorScheme: 'light', reducedMotion: 'no-preference' });
  await page.goto(PAGE);
  await expect(page.locator('body[data-ready=yes]')).toBeAttached();
  const element = page.locator('#element-host');
  const playground = page.locator('#playground');

  // clef-decide.styles.ts as it was: .progress gap 0.35rem, 0.9em, var(--_muted) #4f5866; the
  // track rgb(120 130 145 / 0.2); the fill var(--_accent) #2458d6, width eased over 120 ms.
  const elementLook = {
    display: 'grid',
    gap: '5.6px',
    fontSize: '14.4px',
    color: 'rgb(79, 88, 102)',
    marginTop: '0px',
    trackHeight: '5.6px',
    trackRadius: '999px',
    trackBackground: 'rgba(120, 130, 145, 0.2)',
    trackOverflow: 'hidden',
    fillBackground: 'rgb(36, 88, 214)',
  };
  expect(await look(element.locator('.counted .progress'))).toEqual({
    ...elementLook,
    fillWidthShare: 40,
    fillTransition: 'width 0.12s linear',
    fillAnimation: 'none',
  });
  expect(await look(element.locator('.unknown .progress'))).toEqual({
    ...elementLook,
    fillWidthShare: 35,
    fillTransition: 'width 0.12s linear',
    fillAnimation: '1.1s infinite alternate',
  });

  // playground.css as it was: .progress gap 0.3rem, 0.88rem, var(--muted) #59616d, margin-top
  // 0.75rem; the track var(--line) #d9dde3; the fill var(--accent) #2458d6, no transition.
  const playgroundLook = {
    display: 'grid',
    gap: '4.8px',
    fontSize: '14.08px',
    color: 'rgb(89, 97, 109)',
    marginTop: '12px',
    trackHeight: '5.6px',
    trackRadius: '999px',
    trackBackground: 'rgb(217, 221, 227)',
    trackOverflow: 'hidden',
    fillBackground: 'rgb(36, 88, 214)',
    fillTransition: 'none',
  };
  expect(await look(playground.locator('.counted .progress'))).toEqual({
    ...playgroundLook,
    fillWidthShare: 40,
    fillAnimation: 'none',
  });
  expect(await look(playground.locator('.unknown .progress'))).toEqual({
    ...playgroundLook,
    fillWidthShare: 35,
    fillAnimation: '1.1s infinite alternate',
  });

  // The markup: a labelled progressbar with its value while bytes are counted, none otherwise.
  for (const host of [element, playground]) {
    const counted = host.locator('.counted [role=progressbar]');
    await expect(counted).toHaveAttribute('aria-valuenow', '40');
    await expect(counted).toHaveAttribute('aria-label', 'Loading the model');
    await expect(counted).toHaveAttribute(
      'aria-valuetext',
      'Downloading backbone.onnx · 4.0 MB of 10 MB',
    );
    await expect(host.locator('.unknown [role=progressbar]')).not.toHaveAttribute(
      'aria-valuenow',
      /.*/,
    );
    await expect(host.locator('.unknown [role=progressbar]')).toHaveAttribute(
      'aria-valuetext',
      'Starting the engine…',
    );
    await expect(host.locator('.counted .progress')).toHaveAttribute('part', 'progress');
  }
});

test('a reader who asked for less motion gets a still bar in both', async ({ page }) => {
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto(PAGE);
  await expect(page.locator('body[data-ready=yes]')).toBeAttached();
  for (const host of ['#element-host', '#playground']) {
    const animation = await page
      .locator(`${host} .unknown .progress-fill`)
      .evaluate((el) => getComputedStyle(el).animationName);
    expect(animation, host).toBe('none');
  }
});
